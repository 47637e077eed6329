/**
 * The value layer of the JSON row scanner (json-line-scan.ts): where one JSON value in UTF-8 bytes
 * ends, checked as strictly as `JSON.parse` checks it (RFC 8259: strict numbers, the four
 * whitespace bytes, no control bytes in strings, only the JSON escapes). Bytes ≥ 0x80 are allowed
 * in strings only; the caller checks the bytes are valid UTF-8 where it matters (`isUtf8`).
 *
 * A function here that finds a fault returns -1 and leaves what and where in `failure` (read by
 * `lastFailure`), so that the hot path pays nothing for messages it does not use.
 */
import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';

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

/** Object or array nesting: 0 for an object, 1 for an array (grows for deeper values). */
let stack: Uint8Array = new Uint8Array(512);

export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Bytes a string's content may hold as they are (0), and those that need a look (1). */
export const PLAIN = new Uint8Array(256);
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

/** Index just past the string whose opening quote is at `start`, or -1. */
export function skipString(b: Uint8Array, start: number, end: number): number {
  let i = start + 1;
  for (;;) {
    i = skipPlain(b, i, end);
    if (i >= end) return no(start, 'unterminated string');
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return no(i, 'control character in a string');
    if (i + 1 >= end) return no(start, 'unterminated string');
    const e = b[i + 1];
    if (e === 0x75) {
      if (i + 5 >= end || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) {
        return no(i, 'invalid escape in a string');
      }
      i += 6;
      continue;
    }
    // " \ / b f n r t
    if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
      return no(i, 'invalid escape in a string');
    }
    i += 2;
  }
}

function digits(b: Uint8Array, i: number, end: number): number {
  while (i < end && b[i] >= 0x30 && b[i] <= 0x39) i++;
  return i;
}

/** Index just past the number starting at `i`, or -1. */
function skipNumber(b: Uint8Array, i: number, end: number): number {
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

function literal(b: Uint8Array, i: number, end: number, word: string): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

export function ws(b: Uint8Array, i: number, end: number): number {
  while (i < end && isWs(b[i])) i++;
  return i;
}

/** After `"key"` in an object: whitespace, `:`, whitespace; the index of the value, or -1. */
export function colon(b: Uint8Array, i: number, end: number): number {
  i = ws(b, i, end);
  if (i >= end || b[i] !== COLON) return no(i, "expected ':'");
  return ws(b, i + 1, end);
}

/** A member name and its colon at `i` inside a nested object: the index of the value, or -1. */
function memberName(b: Uint8Array, i: number, end: number): number {
  if (i >= end || b[i] !== QUOTE) return no(i, 'expected a string key');
  i = skipString(b, i, end);
  return i < 0 ? -1 : colon(b, i, end);
}

/** The scalar (number or literal) at `i`: the index just past it, or -1. */
function skipScalar(b: Uint8Array, i: number, end: number, c: number): number {
  let j = -1;
  if (c === 0x74) j = literal(b, i, end, 'true');
  else if (c === 0x66) j = literal(b, i, end, 'false');
  else if (c === 0x6e) j = literal(b, i, end, 'null');
  else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) j = skipNumber(b, i, end);
  return j < 0 ? no(i, 'invalid value') : j;
}

/**
 * The fault after a value that `b[at]` does not follow as it should: a scalar running into other
 * text (`01`, `tru e`) is an invalid value at its start, anything else is `expected`.
 */
export function afterValueFault(b: Uint8Array, valueStart: number, valueEnd: number, at: number, expected: string): -1 {
  const c = b[valueStart];
  const scalar = c !== QUOTE && c !== LBRACE && c !== LBRACKET;
  const next = b[valueEnd];
  const runsOn = valueEnd < b.length && !isWs(next) && next !== COMMA && next !== RBRACE && next !== RBRACKET;
  return scalar && runsOn ? no(valueStart, 'invalid value') : no(at, expected);
}

/** Index just past the JSON value starting at `i` (no leading whitespace), or -1. */
export function skipValue(b: Uint8Array, i: number, end: number): number {
  const top = i;
  let depth = 0;
  let valueStart = i;
  for (;;) {
    // A value starts at i.
    if (i >= end) return depth > 0 ? no(top, 'unterminated object or array') : no(i, 'expected a value');
    valueStart = i;
    const c = b[i];
    let opened = false;
    if (c === LBRACE || c === LBRACKET) {
      i = ws(b, i + 1, end);
      if (i < end && b[i] === (c === LBRACE ? RBRACE : RBRACKET)) i++;
      else {
        if (depth === stack.length) stack = grown(stack);
        stack[depth++] = c === LBRACE ? 0 : 1;
        if (c === LBRACE) i = memberName(b, i, end);
        opened = true;
      }
    } else if (c === QUOTE) i = skipString(b, i, end);
    else i = skipScalar(b, i, end, c);
    if (i < 0) return -1;
    if (opened) continue;
    // After a value: close containers until one wants another value.
    const valueEnd = i;
    for (;;) {
      if (depth === 0) return i;
      i = ws(b, i, end);
      if (i >= end) return no(top, 'unterminated object or array');
      const d = b[i];
      const inObject = stack[depth - 1] === 0;
      if (d === (inObject ? RBRACE : RBRACKET)) {
        depth--;
        i++;
        continue;
      }
      if (d === RBRACE || d === RBRACKET) return no(i, 'mismatched bracket');
      if (d !== COMMA) return afterValueFault(b, valueStart, valueEnd, i, inObject ? "expected ',' or '}'" : "expected ',' or ']'");
      i = ws(b, i + 1, end);
      if (inObject) i = memberName(b, i, end);
      if (i < 0) return -1;
      break;
    }
  }
}

function grown(s: Uint8Array): Uint8Array {
  const next = new Uint8Array(s.length * 2);
  next.set(s);
  return next;
}
