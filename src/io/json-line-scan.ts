/**
 * A fast check that one JSONL line's bytes are a JSON object `JSON.parse` accepts, finding where
 * chosen top-level members' values are, without building the row. The plan phase validates every
 * line of 10^6-row files with it; only a line it does not accept (or one it cannot speak for) goes
 * through `JSON.parse`, which then gives the exact error message.
 *
 * It is never more lenient than `JSON.parse` (RFC 8259: strict numbers, the four whitespace bytes,
 * no control bytes in strings, only the JSON escapes); where it is unsure it says "no" and the
 * caller falls back to the full parser: a top-level key with an escape (it could spell a wanted
 * name), nesting deeper than `MAX_DEPTH`. Bytes ≥ 0x80 are allowed in strings only; the caller
 * checks that the line is valid UTF-8 (`isUtf8`, native and fast).
 */

/** Not a JSON object (or not one this scanner vouches for): use `JSON.parse`. */
export const SCAN_NO = 0;
/** A JSON object, if its bytes are valid UTF-8 (bytes ≥ 0x80 are let through in strings: check with `isUtf8`). */
export const SCAN_OK = 1;

const MAX_DEPTH = 512;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A set of top-level member names to find (ASCII), in `out` slots `2i` (value start) and `2i + 1` (end). */
export class MemberNames {
  readonly bytes: Buffer[];
  constructor(readonly names: readonly string[]) {
    this.bytes = names.map((n) => Buffer.from(n, 'latin1'));
  }
  /** A fresh output array for `scanJsonObjectLine`. */
  slots(): Int32Array {
    return new Int32Array(2 * this.names.length);
  }
}

const stack = new Uint8Array(MAX_DEPTH);

function isWs(c: number): boolean {
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
 * The bytes of the line being scanned as 32-bit words, set by `scanJsonObjectLine`: the view starts
 * at the aligned address at or before the buffer's first byte, `delta` bytes before it (a buffer
 * cut out of a larger read starts anywhere). The view of a buffer is kept for the next line of the
 * same read; one above `KEEP_MAX` (a read grown for a huge line) is not kept, so that it is not
 * held after its read.
 */
let words: Int32Array = new Int32Array(0);
let delta = 0;
let keptFor: Uint8Array | null = null;
let kept: Int32Array = words;
const KEEP_MAX = 8 << 20;
const EMPTY_WORDS = words;

function wordView(b: Uint8Array): Int32Array {
  delta = b.byteOffset & 3;
  if (b === keptFor) return kept;
  const view = new Int32Array(b.buffer, b.byteOffset - delta, (b.length + delta) >> 2);
  if (b.length <= KEEP_MAX) {
    keptFor = b;
    kept = view;
  }
  return view;
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

function ws(b: Uint8Array, i: number, end: number): number {
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
function skipValue(b: Uint8Array, i: number, end: number): number {
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

/** True when `b[ks, ke)` spells `name`. */
function sameBytes(b: Uint8Array, ks: number, ke: number, name: Buffer): boolean {
  if (ke - ks !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[ks + k] !== name[k]) return false;
  return true;
}

/**
 * Checks that `b[start, end)` is one JSON object (whitespace around it allowed) and finds the value
 * spans of `names`' members (the last one when a name repeats, as `JSON.parse` keeps the last):
 * `out[2i]`, `out[2i + 1]`, or -1 when absent. Returns `SCAN_NO` or `SCAN_OK`.
 */
export function scanJsonObjectLine(b: Uint8Array, start: number, end: number, names: MemberNames, out: Int32Array): number {
  words = wordView(b);
  const result = scanObjectLine(b, start, end, names, out);
  words = EMPTY_WORDS;
  return result;
}

/** `scanJsonObjectLine` once `words` is set. */
function scanObjectLine(b: Uint8Array, start: number, end: number, names: MemberNames, out: Int32Array): number {
  out.fill(-1);
  const wanted = names.bytes;
  let i = ws(b, start, end);
  if (i >= end || b[i] !== 0x7b) return SCAN_NO;
  i = ws(b, i + 1, end);
  if (i < end && b[i] === 0x7d) i++;
  else {
    for (;;) {
      if (i >= end || b[i] !== QUOTE) return SCAN_NO;
      // A key without escapes (one with an escape could spell a wanted name: the full parser decides).
      const ks = i + 1;
      i = ks;
      while (i < end && PLAIN[b[i]] === 0) i++;
      if (i >= end || b[i] !== QUOTE) return SCAN_NO;
      const ke = i;
      i = colon(b, i + 1, end);
      if (i < 0) return SCAN_NO;
      const vs = i;
      i = skipValue(b, i, end);
      if (i < 0) return SCAN_NO;
      for (let w = 0; w < wanted.length; w++) {
        if (sameBytes(b, ks, ke, wanted[w])) {
          out[2 * w] = vs;
          out[2 * w + 1] = i;
        }
      }
      i = ws(b, i, end);
      if (i >= end) return SCAN_NO;
      if (b[i] === 0x7d) {
        i++;
        break;
      }
      if (b[i] !== 0x2c) return SCAN_NO;
      i = ws(b, i + 1, end);
    }
  }
  if (ws(b, i, end) !== end) return SCAN_NO;
  return SCAN_OK;
}

const MAX_SAFE_DIGITS = 15;

/**
 * The value of a plain non-negative integer literal `b[s, e)` of at most 15 digits (`0`, `42`), or
 * -1 for anything else (a sign, a fraction, an exponent, more digits): such values take the
 * general path.
 */
export function smallIntAt(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n < 1 || n > MAX_SAFE_DIGITS) return -1;
  if (n > 1 && b[s] === 0x30) return -1;
  let v = 0;
  for (let k = s; k < e; k++) {
    const c = b[k] - 0x30;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}
