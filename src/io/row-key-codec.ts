/**
 * Binary encoding of row keys and strings for external-sort records. Lossless: a key part keeps
 * its JSON type (`true` stays `true`, not `1`, for messages that print it) and strings are stored
 * as UTF-16 code units, so even a lone surrogate (valid in a JSON string) survives a run file.
 */
import type { KeyPart, RowKey } from '../contract/row-key.js';

const NULL = 0;
const FALSE = 1;
const TRUE = 2;
const NUMBER = 3;
const STRING = 4;

/** Bytes `writeString` uses for `s`. */
export function stringSize(s: string): number {
  return 4 + 2 * s.length;
}

/** Writes `s` (its length in code units, then the units); returns the end position. */
export function writeString(s: string, buf: Buffer, at: number): number {
  buf.writeUInt32LE(s.length, at);
  buf.write(s, at + 4, 'utf16le');
  return at + stringSize(s);
}

/** Reads a string written by `writeString`; returns it and the end position. */
export function readString(buf: Buffer, at: number): [string, number] {
  const end = at + 4 + 2 * buf.readUInt32LE(at);
  return [buf.toString('utf16le', at + 4, end), end];
}

function partSize(p: KeyPart): number {
  if (typeof p === 'number') return 9;
  if (typeof p === 'string') return 1 + stringSize(p);
  return 1;
}

function writePart(p: KeyPart, buf: Buffer, at: number): number {
  if (typeof p === 'number') {
    buf[at] = NUMBER;
    buf.writeDoubleLE(p, at + 1);
    return at + 9;
  }
  if (typeof p === 'string') {
    buf[at] = STRING;
    return writeString(p, buf, at + 1);
  }
  buf[at] = p === null ? NULL : p ? TRUE : FALSE;
  return at + 1;
}

function readPart(buf: Buffer, at: number): [KeyPart, number] {
  switch (buf[at]) {
    case NUMBER:
      return [buf.readDoubleLE(at + 1), at + 9];
    case STRING:
      return readString(buf, at + 1);
    case TRUE:
      return [true, at + 1];
    case FALSE:
      return [false, at + 1];
    default:
      return [null, at + 1];
  }
}

/** Bytes `writeRowKey` uses for `k`. */
export function rowKeySize(k: RowKey): number {
  return partSize(k.task) + partSize(k.rollout);
}

/** Writes `k`; returns the end position. */
export function writeRowKey(k: RowKey, buf: Buffer, at: number): number {
  return writePart(k.rollout, buf, writePart(k.task, buf, at));
}

/** Reads a key written by `writeRowKey`; returns it and the end position. */
export function readRowKey(buf: Buffer, at: number): [RowKey, number] {
  const [task, p] = readPart(buf, at);
  const [rollout, end] = readPart(buf, p);
  return [{ task, rollout }, end];
}
