import { open, type FileHandle } from 'node:fs/promises';
import { lineDigest, type LineDigest } from './line-digest.js';
import { readRangeBytes, ShortReadError } from './read-range.js';

/** A byte range of a file; with `digest`, the `lineDigest` its bytes must have. */
export interface ByteRange {
  offset: number;
  length: number;
  digest?: LineDigest;
}

/** A range whose bytes are not what was recorded (changed, moved, or past the end of the file). */
export class ChangedRangeError extends Error {
  constructor(
    readonly path: string,
    /** Index of the range in the list given to `readRanges`. */
    readonly index: number,
  ) {
    super(`${path}: the bytes at offset ${index} are not the ones recorded`);
  }
}

/** Ranges closer than this are read together (the gap is read and dropped). */
const MAX_GAP = 64 * 1024;
/** The most bytes one read covers. */
const MAX_WINDOW = 8 * 1024 * 1024;

/**
 * Reads many byte ranges of one file as UTF-8 texts, in the order given (`readRangesBytes`).
 */
export async function readRanges(path: string, ranges: ByteRange[]): Promise<string[]> {
  return (await readRangesBytes(path, ranges)).map((b) => b.toString('utf8'));
}

/**
 * Reads many byte ranges of one file, in the order given, with few reads: ranges sorted by offset
 * are coalesced into windows (a batch's rows sit next to each other in the source file), and each
 * window is read once. The bytes stay outside V8's heap until a caller decodes them, so a batch's
 * rows, held for the whole batch, are not copied into the old generation as strings; a window
 * mostly made of gaps is not kept (its ranges are copied out). A range with a `digest` is proven: if
 * its bytes' digest differs, or the file ends before it, `ChangedRangeError`.
 */
export async function readRangesBytes(path: string, ranges: ByteRange[]): Promise<Buffer[]> {
  const fh = await open(path, 'r');
  try {
    return await readRangesFrom(fh, path, ranges);
  } finally {
    await fh.close();
  }
}

/** `readRangesBytes` on a file the caller holds open (`path` names it in errors). */
export async function readRangesFrom(fh: FileHandle, path: string, ranges: ByteRange[]): Promise<Buffer[]> {
  const out = new Array<Buffer>(ranges.length);
  const order = ranges.map((_, i) => i).sort((a, b) => ranges[a].offset - ranges[b].offset);
  try {
    const size = (await fh.stat()).size;
    for (let i = 0; i < order.length;) {
      const first = ranges[order[i]];
      let end = first.offset + first.length;
      let covered = first.length;
      let j = i + 1;
      while (j < order.length) {
        const r = ranges[order[j]];
        const newEnd = Math.max(end, r.offset + r.length);
        if (r.offset - end > MAX_GAP || newEnd - first.offset > MAX_WINDOW) break;
        end = newEnd;
        covered += r.length;
        j++;
      }
      if (end > size)
        throw new ChangedRangeError(
          path,
          order.slice(i, j).find((k) => ranges[k].offset + ranges[k].length > size)!,
        );
      const window = await readRangeBytes(fh, first.offset, end - first.offset);
      const keep = window.length <= 2 * covered;
      for (let k = i; k < j; k++) {
        const r = ranges[order[k]];
        const bytes = window.subarray(r.offset - first.offset, r.offset - first.offset + r.length);
        if (r.digest !== undefined && lineDigest(bytes) !== r.digest) throw new ChangedRangeError(path, order[k]);
        out[order[k]] = keep ? bytes : Buffer.from(bytes);
      }
      i = j;
    }
  } catch (err) {
    // The file shrank between the size check and the read.
    throw err instanceof ShortReadError ? new ChangedRangeError(path, order[0] ?? 0) : err;
  }
  return out;
}
