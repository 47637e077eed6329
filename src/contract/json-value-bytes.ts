/**
 * The value layer of the JSON row scanner (json-line-scan.ts): where one JSON value in UTF-8 bytes
 * ends, checked as strictly as `JSON.parse` checks it (RFC 8259: strict numbers, the four
 * whitespace bytes, no control bytes in strings, only the JSON escapes). Bytes ≥ 0x80 are allowed
 * in strings only; the caller checks the bytes are valid UTF-8 where it matters (`isUtf8`).
 *
 * Two readings: this strict one (`skipValue`) for the hot path says only "no" (-1) where a value
 * is not JSON; the loose one for raw-text edits (json-loose-value.ts) leaves what and where it
 * broke for `lastFailure`.
 */
import * as chars from './json-chars.js';
// Local copies of the imports used per byte: where these modules are loaded as CommonJS (tsx's
// require hook, on a scanning thread run from the sources) every use of an import is a getter call.
const BACKSLASH = chars.BACKSLASH;
const QUOTE = chars.QUOTE;

/**
 * What the scanner reads: a row's UTF-8 bytes, or for raw-text edits a string's UTF-16 code units
 * (JSON's structure is ASCII, the same number in both).
 */
export type Units = Uint8Array | Uint16Array;

let failAt = -1;
let failReason = '';

/** Records a fault at byte `at` and returns -1. */
export function no(at: number, reason: string): -1 {
  failAt = at;
  failReason = reason;
  return -1;
}

/** The last fault recorded by `no`. */
export function lastFailure(): { at: number; reason: string } {
  return { at: failAt, reason: failReason };
}

/** Deeper values are not vouched for (the caller falls back to `JSON.parse`). */
const MAX_DEPTH = 512;
/** Object or array nesting: 0 for an object, 1 for an array. */
const stack = new Uint8Array(MAX_DEPTH);

export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Bytes a string's content may hold as they are (0), and those that need a look (1). */
const PLAIN = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) PLAIN[c] = 1;
PLAIN[QUOTE] = 1;
PLAIN[BACKSLASH] = 1;

/**
 * The bytes of the buffer being scanned as 32-bit words, set by `beginScan`: the view starts at the
 * aligned address at or before the buffer's first byte, `delta` bytes before it (a buffer cut out
 * of a larger read starts anywhere). The view of a buffer is kept for the next line of the same
 * read; one above `KEEP_MAX` (a read grown for a huge line) is not kept, so that it is not held
 * after its read.
 */
let words: Int32Array = new Int32Array(0);
let delta = 0;
let keptFor: Uint8Array | null = null;
let kept: Int32Array = words;
const KEEP_MAX = 8 << 20;
const EMPTY_WORDS = words;

/** Makes `b` the buffer the word-at-a-time string skip reads; call `endScan` after. */
export function beginScan(b: Uint8Array): void {
  delta = b.byteOffset & 3;
  if (b === keptFor) {
    words = kept;
    return;
  }
  words = new Int32Array(b.buffer, b.byteOffset - delta, (b.length + delta) >> 2);
  if (b.length <= KEEP_MAX) {
    keptFor = b;
    kept = words;
  }
}

export function endScan(): void {
  words = EMPTY_WORDS;
}

/**
 * Index of the first byte in `b[i, end)` that is not plain string content (`PLAIN`), or `end`.
 * Four bytes at a time: a word holds such a byte exactly when it has a byte below 0x20, or one
 * equal to `"` or `\` (the classic zero-byte tests); only that word is then looked at byte by byte.
 * Word `w` holds bytes `4w - delta` to `4w - delta + 3` of `b`.
 */
function skipPlain(b: Uint8Array, i: number, end: number): number {
  const w32 = words;
  const d = delta;
  const wordEnd = (end + d) >> 2;
  for (;;) {
    while (((i + d) & 3) !== 0) {
      if (i >= end || PLAIN[b[i]] !== 0) return i;
      i++;
    }
    let w = (i + d) >> 2;
    while (w < wordEnd) {
      const x = w32[w];
      const q = x ^ 0x22222222;
      const e = x ^ 0x5c5c5c5c;
      if (((((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((e - 0x01010101) & ~e)) & 0x80808080) !== 0) break;
      w++;
    }
    i = (w << 2) - d;
    const stop = Math.min(i + 4, end);
    while (i < stop) {
      if (PLAIN[b[i]] !== 0) return i;
      i++;
    }
    if (i >= end) return end;
  }
}

/**
 * Index just past the string whose opening quote is at `i`, or -1. Bytes ≥ 0x80 pass (the caller
 * checks the line's UTF-8 with `isUtf8`).
 */
function skipString(b: Uint8Array, i: number, end: number): number {
  i++;
  for (;;) {
    i = skipPlain(b, i, end);
    if (i >= end) return -1;
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return -1; // a control byte
    if (i + 1 >= end) return -1;
    const e = b[i + 1];
    if (e === 0x75) {
      if (i + 5 >= end || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) return -1;
      i += 6;
      continue;
    }
    // " \ / b f n r t
    if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
    i += 2;
  }
}

function digits(b: Units, i: number, end: number): number {
  while (i < end && b[i] >= 0x30 && b[i] <= 0x39) i++;
  return i;
}

/** Index just past the number starting at `i`, or -1. */
export function skipNumber(b: Units, i: number, end: number): number {
  if (b[i] === 0x2d) i++;
  if (i >= end) return -1;
  if (b[i] === 0x30) i++;
  else if (b[i] >= 0x31 && b[i] <= 0x39) i = digits(b, i + 1, end);
  else return -1;
  if (i < end && b[i] === 0x2e) {
    const j = digits(b, i + 1, end);
    if (j === i + 1) return -1;
    i = j;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const j = digits(b, i, end);
    if (j === i) return -1;
    i = j;
  }
  return i;
}

export function literal(b: Units, i: number, end: number, word: string): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

export function ws(b: Units, i: number, end: number): number {
  while (i < end && isWs(b[i])) i++;
  return i;
}

/** After `"key"` in an object: whitespace, `:`, whitespace; the index of the value, or -1. */
function colon(b: Uint8Array, i: number, end: number): number {
  i = ws(b, i, end);
  if (i >= end || b[i] !== 0x3a) return -1;
  return ws(b, i + 1, end);
}

/** Index just past the JSON value starting at `i` (no leading whitespace), or -1. */
export function skipValue(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  for (;;) {
    // A value starts at i.
    if (i >= end) return -1;
    const c = b[i];
    let opened = false;
    if (c === 0x7b) {
      i = ws(b, i + 1, end);
      if (i < end && b[i] === 0x7d) i++;
      else {
        if (depth >= MAX_DEPTH) return -1;
        stack[depth++] = 0;
        if (i >= end || b[i] !== QUOTE) return -1;
        i = skipString(b, i, end);
        if (i < 0) return -1;
        i = colon(b, i, end);
        if (i < 0) return -1;
        opened = true;
      }
    } else if (c === 0x5b) {
      i = ws(b, i + 1, end);
      if (i < end && b[i] === 0x5d) i++;
      else {
        if (depth >= MAX_DEPTH) return -1;
        stack[depth++] = 1;
        opened = true;
      }
    } else if (c === QUOTE) i = skipString(b, i, end);
    else if (c === 0x74) i = literal(b, i, end, 'true');
    else if (c === 0x66) i = literal(b, i, end, 'false');
    else if (c === 0x6e) i = literal(b, i, end, 'null');
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) i = skipNumber(b, i, end);
    else return -1;
    if (i < 0) return -1;
    if (opened) continue;
    // After a value: close containers until one wants another value.
    for (;;) {
      if (depth === 0) return i;
      i = ws(b, i, end);
      if (i >= end) return -1;
      const d = b[i];
      if (stack[depth - 1] === 0) {
        if (d === 0x7d) {
          depth--;
          i++;
          continue;
        }
        if (d !== 0x2c) return -1;
        i = ws(b, i + 1, end);
        if (i >= end || b[i] !== QUOTE) return -1;
        i = skipString(b, i, end);
        if (i < 0) return -1;
        i = colon(b, i, end);
        if (i < 0) return -1;
        break;
      }
      if (d === 0x5d) {
        depth--;
        i++;
        continue;
      }
      if (d !== 0x2c) return -1;
      i = ws(b, i + 1, end);
      break;
    }
  }
}

/** Index of the quote ending the string at `i` when its content is plain (`PLAIN`), else -1. */
export function plainStringEnd(b: Units, i: number, end: number): number {
  let j = i + 1;
  while (j < end && PLAIN[b[j]] === 0) j++;
  return j < end && b[j] === QUOTE ? j : -1;
}
