/**
 * Raw-text access to the top level of ONE JSON object, so rows can be edited without
 * `JSON.parse` + `JSON.stringify` (which would round integers above 2^53 and rewrite `1.0` as `1`).
 *
 * The scanner checks the top-level structure strictly (one object, string keys, `:` and `,` in the
 * right places, valid top-level scalars, nothing after the closing brace) and nested values only as
 * far as needed to find where they end: strings with escapes, balanced and matching brackets.
 * Callers that need full validation of nested content parse the row with `JSON.parse` separately.
 */

import { BACKSLASH, COLON, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from './json-chars.js';

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

const SCALAR = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;

function skipWs(text: string, i: number): number {
  const n = text.length;
  while (i < n && isJsonWhitespace(text.charCodeAt(i))) i++;
  return i;
}

function describeAt(text: string, i: number): string {
  return i >= text.length ? 'end of text' : `${JSON.stringify(text[i])}`;
}

function fail(reason: string, text: string, i: number): never {
  throw new SyntaxError(`not a single JSON object: ${reason} at offset ${i} (found ${describeAt(text, i)})`);
}

/** Offset just past the closing quote of the string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) fail('unterminated string', text, i);
    let b = q - 1;
    while (b > i && text.charCodeAt(b) === BACKSLASH) b--;
    // An even number of backslashes before the quote: it is not escaped.
    if (((q - 1 - b) & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/** Offset just past the bracket closing the object or array that opens at `i`. */
function containerEnd(text: string, i: number): number {
  const n = text.length;
  const closers: number[] = [text.charCodeAt(i) === LBRACE ? RBRACE : RBRACKET];
  let j = i + 1;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      j = stringEnd(text, j);
      continue;
    }
    if (c === LBRACE) closers.push(RBRACE);
    else if (c === LBRACKET) closers.push(RBRACKET);
    else if (c === RBRACE || c === RBRACKET) {
      if (closers.pop() !== c) fail('mismatched bracket', text, j);
      if (closers.length === 0) return j + 1;
    }
    j++;
  }
  return fail('unterminated object or array', text, i);
}

/** Offset just past the value that starts at `i` (which is not whitespace). */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === LBRACE || c === LBRACKET) return containerEnd(text, i);
  const n = text.length;
  let j = i;
  while (j < n) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === RBRACE || d === RBRACKET || isJsonWhitespace(d)) break;
    j++;
  }
  if (j === i || !SCALAR.test(text.slice(i, j))) fail('invalid value', text, i);
  return j;
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
  const n = text.length;
  const open = skipWs(text, 0);
  if (open >= n || text.charCodeAt(open) !== LBRACE) fail("expected '{'", text, open);
  const members: Member[] = [];
  let i = skipWs(text, open + 1);
  if (text.charCodeAt(i) !== RBRACE) {
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) fail('expected a string key', text, i);
      const keyStart = i;
      const keyEnd = stringEnd(text, i);
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) fail("expected ':'", text, i);
      const valueStart = skipWs(text, i + 1);
      if (valueStart >= n) fail('expected a value', text, valueStart);
      const end = valueEnd(text, valueStart);
      members.push({ key: decodeKey(text, keyStart, keyEnd), keyStart, valueStart, valueEnd: end });
      i = skipWs(text, end);
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i = skipWs(text, i + 1);
        continue;
      }
      if (c === RBRACE) break;
      fail("expected ',' or '}'", text, i);
    }
  }
  const close = i;
  const after = skipWs(text, close + 1);
  if (after !== n) fail('unexpected text after the object', text, after);
  return { open, close, members };
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
 * Elements are checked only as far as `scanObject` checks nested values. Throws `SyntaxError`.
 */
export function arrayElementSpans(text: string): Span[] {
  const n = text.length;
  const open = skipWs(text, 0);
  if (open >= n || text.charCodeAt(open) !== LBRACKET) fail("expected '['", text, open);
  const spans: Span[] = [];
  let i = skipWs(text, open + 1);
  if (text.charCodeAt(i) !== RBRACKET) {
    for (;;) {
      if (i >= n) fail('expected a value', text, i);
      const end = valueEnd(text, i);
      spans.push({ start: i, end });
      i = skipWs(text, end);
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i = skipWs(text, i + 1);
        continue;
      }
      if (c === RBRACKET) break;
      fail("expected ',' or ']'", text, i);
    }
  }
  if (skipWs(text, i + 1) !== n) fail('unexpected text after the array', text, i + 1);
  return spans;
}
