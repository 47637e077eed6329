/**
 * Raw-text access to the top level of ONE JSON object, so rows can be edited without
 * `JSON.parse` + `JSON.stringify` (which would round integers above 2^53 and rewrite `1.0` as `1`).
 *
 * The text is scanned by the one row scanner (src/io/json-line-scan.ts, on its UTF-8 bytes), which
 * checks it as strictly as `JSON.parse`; its byte offsets are turned into string offsets here.
 */

import { scanArrayElements, scanObjectMembers } from '../io/json-line-scan.js';

/** `[start, end)` offsets of a raw value inside the scanned text. */
export interface Span {
  start: number;
  end: number;
}

/** One top-level member as it appears in the text (duplicates included). */
export interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

/** The result of scanning one JSON object's top level (see `scanObject`). */
export interface ObjectScan {
  /** Offset of `{`. */
  open: number;
  /** Offset of the matching `}`. */
  close: number;
  members: Member[];
}

function fail(reason: string, text: string, i: number): never {
  const found = i >= text.length ? 'end of text' : `${JSON.stringify(text[i])}`;
  throw new SyntaxError(`not a single JSON object: ${reason} at offset ${i} (found ${found})`);
}

/**
 * String offsets of byte offsets of `text`'s UTF-8 bytes `b`, asked in increasing order (one pass
 * over the bytes; none when the text is ASCII).
 */
function charOffsets(text: string, b: Buffer): (byteOffset: number) => number {
  if (b.length === text.length) return (at) => at;
  let byte = 0;
  let char = 0;
  return (at) => {
    if (at < byte) [byte, char] = [0, 0];
    for (; byte < at; byte++) if ((b[byte] & 0xc0) !== 0x80) char += b[byte] >= 0xf0 ? 2 : 1;
    return char;
  };
}

/**
 * Scans the top level of the single JSON object in `text`: every member in text order (duplicates
 * included) with its key and raw value offsets. Throws `SyntaxError` like `topLevelSpans`. Use it
 * with `spansOf` / `setFieldsScanned` to scan a large row once for several operations.
 */
export function scanObject(text: string): ObjectScan {
  const b = Buffer.from(text, 'utf8');
  const scan = scanObjectMembers(b);
  const at = charOffsets(text, b);
  if ('reason' in scan) fail(scan.reason, text, at(scan.at));
  const open = at(scan.open);
  const members = scan.members.map((m) => ({
    key: m.key,
    keyStart: at(m.keyStart),
    valueStart: at(m.valueStart),
    valueEnd: at(m.valueEnd),
  }));
  return { open, close: at(scan.close), members };
}

/**
 * Raw value span of each top-level key of the JSON object in `text`. A repeated key keeps its
 * first position in the map but gets the span of its LAST occurrence (orjson/Python semantics).
 * Throws `SyntaxError` with the reason and offset when `text` is not a single JSON object
 * (surrounding JSON whitespace, e.g. a trailing `\n`, is allowed).
 */
export function topLevelSpans(text: string): Map<string, Span> {
  return spansOf(scanObject(text));
}

/** The `topLevelSpans` map of an existing scan. */
export function spansOf(scan: ObjectScan): Map<string, Span> {
  const spans = new Map<string, Span>();
  for (const m of scan.members) spans.set(m.key, { start: m.valueStart, end: m.valueEnd });
  return spans;
}

/** Raw text of the top-level value of `key` (last duplicate wins), or `undefined` if absent. */
export function rawField(text: string, key: string): string | undefined {
  const span = topLevelSpans(text).get(key);
  return span === undefined ? undefined : text.slice(span.start, span.end);
}

/**
 * Assigns and removes top-level keys with Python-dict semantics, on raw text:
 * keys in `remove` disappear (every duplicate occurrence); then each `[key, rawValue]` is assigned:
 * an existing key keeps its position and gets `rawValue` (the last occurrence is replaced, which is
 * the one every JSON reader keeps), a new key is appended at the end (so a key that is both removed
 * and assigned moves to the end). A key assigned twice takes the later value. Parts written here are
 * compact (`"key":value`); all other text, whitespace included, is kept byte for byte.
 * `rawValue`s must be valid JSON texts; they are not re-checked.
 */
export function setFields(text: string, fields: Array<[key: string, rawValue: string]>, remove: string[] = []): string {
  return setFieldsScanned(text, scanObject(text), fields, remove);
}

/** `setFields` on a text already scanned with `scanObject` (the scan must be of this exact text). */
export function setFieldsScanned(
  text: string,
  scan: ObjectScan,
  fields: Array<[key: string, rawValue: string]>,
  remove: string[] = [],
): string {
  const members = scan.members;
  const removed = new Set(remove);
  const assigned = new Map<string, string>();
  for (const [k, v] of fields) assigned.set(k, v);

  // Index of the member whose value each assigned key replaces in place.
  const lastIndex = new Map<string, number>();
  members.forEach((m, i) => {
    if (assigned.has(m.key) && !removed.has(m.key)) lastIndex.set(m.key, i);
  });
  if (assigned.size === 0 && !members.some((m) => removed.has(m.key))) return text;

  let out = text.slice(0, scan.open + 1);
  let wrote = false;
  let prevEnd = scan.open + 1;
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    const sep = text.slice(prevEnd, m.keyStart);
    prevEnd = m.valueEnd;
    if (removed.has(m.key)) continue;
    // The first member written takes the whitespace after `{`; later ones keep their own separator
    // (which holds exactly one comma, even when the member before it was removed).
    out += wrote ? sep : text.slice(scan.open + 1, members[0].keyStart);
    const value = lastIndex.get(m.key) === i ? assigned.get(m.key)! : text.slice(m.valueStart, m.valueEnd);
    out += text.slice(m.keyStart, m.valueStart) + value;
    wrote = true;
  }
  for (const [k, v] of assigned) {
    if (lastIndex.has(k)) continue;
    out += (wrote ? ',' : '') + JSON.stringify(k) + ':' + v;
    wrote = true;
  }
  const lastEnd = members.length > 0 ? members[members.length - 1].valueEnd : scan.open + 1;
  return out + text.slice(lastEnd, scan.close) + text.slice(scan.close);
}

/**
 * Raw spans of the elements of the JSON array in `text` (surrounding whitespace allowed), in order.
 * Throws `SyntaxError` like `scanObject`.
 */
export function arrayElementSpans(text: string): Span[] {
  const b = Buffer.from(text, 'utf8');
  const spans = scanArrayElements(b);
  const at = charOffsets(text, b);
  if (!Array.isArray(spans)) return fail(spans.reason, text, at(spans.at));
  return spans.map((s) => ({ start: at(s.start), end: at(s.end) }));
}
