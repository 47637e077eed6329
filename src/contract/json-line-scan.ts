/**
 * THE scanner of JSON rows: one JSONL line's bytes checked as a JSON object and its top-level
 * members located (key, value's byte span), without building the row. Everything in reverify that
 * reads a row without `JSON.parse` goes through it: the plan's check of every line, the byte paths
 * of `/verify` bodies and replies, and the raw-text edits of src/contract/json-spans.ts.
 *
 * Why not `JSON.parse` there:
 * - speed: the plan checks every line of 10^6-row inputs; this scanner runs at ≈ 2.5 ns a byte,
 *   `JSON.parse` with its string decoding at 6–8 (docs/performance.md, `bench/plan.ts`: the plan's
 *   CPU went from 29.9 s to ≈ 15 s at 10^6 rows);
 * - exact text: rows are edited and copied as their bytes (an integer above 2^53 or the spelling
 *   `1.0` stays as written), which a parse and `JSON.stringify` would change;
 * - duplicate keys: every occurrence of a repeated top-level key is seen (edits replace the last,
 *   the one `JSON.parse` keeps, and remove them all).
 *
 * It accepts exactly what `JSON.parse` accepts or says no (values are checked by json-value-bytes.ts);
 * bytes ≥ 0x80 are allowed in strings only, so a caller that needs it checks UTF-8 (`isUtf8`).
 */
import * as chars from './json-chars.js';
import * as bytes from './json-value-bytes.js';
import type { Units } from './json-value-bytes.js';
import * as loose from './json-loose-value.js';
// Local copies of the imports used per byte: where these modules are loaded as CommonJS (tsx's
// require hook, on a scanning thread run from the sources) every use of an import is a getter call.
const COLON = chars.COLON;
const COMMA = chars.COMMA;
const LBRACE = chars.LBRACE;
const LBRACKET = chars.LBRACKET;
const QUOTE = chars.QUOTE;
const RBRACE = chars.RBRACE;
const RBRACKET = chars.RBRACKET;
const beginScan = bytes.beginScan;
const endScan = bytes.endScan;
const lastFailure = bytes.lastFailure;
const no = bytes.no;
const plainStringEnd = bytes.plainStringEnd;
const skipValue = bytes.skipValue;
const ws = bytes.ws;
const skipValueLoose = loose.skipValueLoose;
const stringEndLoose = loose.stringEndLoose;

/** Not a JSON object (or not one this scanner vouches for): use `JSON.parse`. */
export const SCAN_NO = 0;
/** A JSON object, if its bytes are valid UTF-8 (bytes ≥ 0x80 are let through in strings: check with `isUtf8`). */
export const SCAN_OK = 1;

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

/**
 * The members of the last object scanned, `STRIDE` numbers each: the key's opening quote, the byte
 * after its closing quote, the value's start and end. Reused from row to row.
 */
const STRIDE = 4;
let found = new Int32Array(STRIDE * 64);
let count = 0;
let openAt = -1;
let closeAt = -1;

function addMember(ks: number, ke: number, vs: number, ve: number): void {
  if ((count + 1) * STRIDE > found.length) {
    const next = new Int32Array(found.length * 2);
    next.set(found);
    found = next;
  }
  const at = count++ * STRIDE;
  found[at] = ks;
  found[at + 1] = ke;
  found[at + 2] = vs;
  found[at + 3] = ve;
}

/**
 * Index just past the key whose quote is at `i`, or -1. Strict, a key with an escape is not vouched
 * for (it could spell a wanted name: `JSON.parse` decides); loose, it is read as `stringEndLoose` reads.
 */
function skipKey(b: Units, i: number, end: number, loose: boolean): number {
  if (i >= end || b[i] !== QUOTE) return no(i, 'expected a string key');
  const j = plainStringEnd(b, i, end);
  if (j >= 0) return j + 1;
  return loose ? stringEndLoose(b, i, end) : -1;
}

/** Records a fault (`no`) and answers false. */
function fault(at: number, reason: string): false {
  no(at, reason);
  return false;
}

/**
 * Scans the object in `b[start, end)` into `found` (whitespace around it allowed), its values
 * checked strictly (`skipValue`) or, when `loose`, as `skipValueLoose` does. False when it is not
 * such an object (loose: what and where for `lastFailure`).
 */
function scanTop(b: Units, start: number, end: number, loose: boolean): boolean {
  count = 0;
  let i = ws(b, start, end);
  if (i >= end || b[i] !== LBRACE) return fault(i, "expected '{'");
  openAt = i;
  i = ws(b, i + 1, end);
  if (i < end && b[i] === RBRACE) closeAt = i;
  else {
    for (;;) {
      const ks = i;
      i = skipKey(b, i, end, loose);
      if (i < 0) return false;
      const ke = i;
      i = ws(b, i, end);
      if (i >= end || b[i] !== COLON) return fault(i, "expected ':'");
      i = ws(b, i + 1, end);
      if (i >= end) return fault(i, 'expected a value');
      const vs = i;
      i = loose ? skipValueLoose(b, i, end) : skipValue(b as Uint8Array, i, end);
      if (i < 0) return false;
      addMember(ks, ke, vs, i);
      i = ws(b, i, end);
      if (i < end && b[i] === RBRACE) {
        closeAt = i;
        break;
      }
      if (i >= end || b[i] !== COMMA) return fault(i, "expected ',' or '}'");
      i = ws(b, i + 1, end);
    }
  }
  const after = ws(b, closeAt + 1, end);
  return after === end || fault(after, 'unexpected text after the object');
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
 * `out[2i]`, `out[2i + 1]`, or -1 when absent. Returns `SCAN_NO` or `SCAN_OK`; `SCAN_NO` too for
 * a top-level key with an escape (it could spell a wanted name: `JSON.parse` decides).
 */
export function scanJsonObjectLine(b: Uint8Array, start: number, end: number, names: MemberNames, out: Int32Array): number {
  out.fill(-1);
  beginScan(b);
  const ok = scanTop(b, start, end, false);
  endScan();
  if (!ok) return SCAN_NO;
  const wanted = names.bytes;
  for (let m = 0; m < count * STRIDE; m += STRIDE) {
    for (let w = 0; w < wanted.length; w++) {
      if (sameBytes(b, found[m] + 1, found[m + 1] - 1, wanted[w])) {
        out[2 * w] = found[m + 2];
        out[2 * w + 1] = found[m + 3];
      }
    }
  }
  return SCAN_OK;
}

/**
 * A scanned object, for raw-text edits: its braces and its members in text order (duplicates
 * included), four offsets each (the key's opening quote, just past its closing quote, the value's
 * start and end; valid until the next scan); or what and where it breaks.
 */
export type ObjectOffsets = { open: number; close: number; members: Int32Array } | { at: number; reason: string };

/** The top-level members of the JSON object in `u` (whitespace around it allowed), read loosely (`skipValueLoose`). */
export function scanObjectMembers(u: Units): ObjectOffsets {
  if (!scanTop(u, 0, u.length, true)) return lastFailure();
  return { open: openAt, close: closeAt, members: found.subarray(0, count * STRIDE) };
}

/** A fault recorded now (`no`), as `lastFailure` gives it. */
function failure(at: number, reason: string): { at: number; reason: string } {
  no(at, reason);
  return lastFailure();
}

/** Spans of the elements of the JSON array in `b` (whitespace around it allowed); or where it breaks. */
export function scanArrayElements(b: Units): Array<{ start: number; end: number }> | { at: number; reason: string } {
  const end = b.length;
  const spans: Array<{ start: number; end: number }> = [];
  let i = ws(b, 0, end);
  if (i >= end || b[i] !== LBRACKET) return failure(i, "expected '['");
  i = ws(b, i + 1, end);
  if (i < end && b[i] === RBRACKET) i++;
  else {
    for (;;) {
      if (i >= end) return failure(i, 'expected a value');
      const start = i;
      i = skipValueLoose(b, i, end);
      if (i < 0) return lastFailure();
      spans.push({ start, end: i });
      i = ws(b, i, end);
      if (i < end && b[i] === RBRACKET) {
        i++;
        break;
      }
      if (i >= end || b[i] !== COMMA) return failure(i, "expected ',' or ']'");
      i = ws(b, i + 1, end);
    }
  }
  if (ws(b, i, end) !== end) return failure(i, 'unexpected text after the array');
  return spans;
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
