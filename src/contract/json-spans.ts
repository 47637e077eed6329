/**
 * Raw-text access to the top level of ONE JSON object, so rows can be edited without
 * `JSON.parse` + `JSON.stringify` (which would round integers above 2^53 and rewrite `1.0` as `1`).
 *
 * The text is scanned by the one row scanner (src/contract/json-line-scan.ts, on its UTF-16 code
 * units, so offsets are the string's), in its loose reading: the top-level structure strictly (one
 * object, string keys, `:` and `,` in the right places, valid top-level scalars, nothing after the
 * closing brace), nested values only as far as needed to find where they end (strings with
 * escapes, balanced and matching brackets). Callers that need full validation of nested content
 * parse the row with `JSON.parse` separately.
 */

import { scanArrayElements, scanObjectMembers } from './json-line-scan.js';

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

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/**
 * Reused for each text (no allocation per text): its bytes when it is ASCII, else its UTF-16 code
 * units. Made on first use (the workflow sandbox, which loads this module, has no `Buffer`).
 */
let scratch: Buffer | undefined;
let scratchUnits: Uint16Array = new Uint16Array(0);

/**
 * `text` as the scanner reads it, offsets being the string's: its bytes when it is ASCII (the
 * common case, and `Buffer.indexOf` finds a string's end fast), else its UTF-16 code units. Valid
 * until the next call.
 */
function unitsOf(text: string): Buffer | Uint16Array {
  if (scratch === undefined || 2 * text.length > scratch.length) {
    scratch = Buffer.from(new ArrayBuffer(2 * text.length + (1 << 16)));
    scratchUnits = new Uint16Array(scratch.buffer);
  }
  if (Buffer.byteLength(text, 'utf8') === text.length) return scratch.subarray(0, scratch.write(text, 0, 'latin1'));
  const n = scratch.write(text, 0, 'utf16le');
  if (!LITTLE_ENDIAN) scratch.subarray(0, n).swap16();
  return scratchUnits.subarray(0, text.length);
}

function decodeKey(text: string, start: number, end: number): string {
  // `start`/`end` include the quotes.
  const inner = text.slice(start + 1, end - 1);
  return inner.indexOf('\\') < 0 ? inner : (JSON.parse(text.slice(start, end)) as string);
}

/**
 * Scans the top level of the single JSON object in `text`: every member in text order (duplicates
 * included) with its key and raw value offsets. Throws `SyntaxError` like `topLevelSpans`. Use it
 * with `spansOf` / `setFieldsScanned` to scan a large row once for several operations.
 */
export function scanObject(text: string): ObjectScan {
  const scan = scanObjectMembers(unitsOf(text));
  if ('reason' in scan) fail(scan.reason, text, scan.at);
  const m = scan.members;
  const members: Member[] = [];
  for (let k = 0; k < m.length; k += 4) {
    members.push({ key: decodeKey(text, m[k], m[k + 1]), keyStart: m[k], valueStart: m[k + 2], valueEnd: m[k + 3] });
  }
  return { open: scan.open, close: scan.close, members };
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
  const spans = scanArrayElements(unitsOf(text));
  if (!Array.isArray(spans)) return fail(spans.reason, text, spans.at);
  return spans;
}
