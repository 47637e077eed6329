/**
 * The loose reading of a value by the row scanner (json-line-scan.ts), for raw-text edits
 * (json-spans.ts): see `skipValueLoose`. A fault leaves what and where for `lastFailure`.
 */
import { BACKSLASH, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from './json-chars.js';
import { isWs, literal, no, skipNumber, type Units } from './json-value-bytes.js';

/**
 * The loose reading raw-text edits use (src/contract/json-spans.ts): a value is checked only as far
 * as finding its end. A string is anything up to a quote not escaped by a backslash (a raw tab, an
 * unknown escape pass: output files written by other tools have them), an object or array is
 * balanced, matching brackets around such strings; only a scalar is checked in full (a JSON number,
 * `true`, `false` or `null`, ending at whitespace, `,`, `}` or `]`).
 */
export function skipValueLoose(b: Units, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEndLoose(b, i, end);
  if (c === LBRACE || c === LBRACKET) return containerEndLoose(b, i, end);
  let j = -1;
  if (c === 0x74) j = literal(b, i, end, 'true');
  else if (c === 0x66) j = literal(b, i, end, 'false');
  else if (c === 0x6e) j = literal(b, i, end, 'null');
  else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) j = skipNumber(b, i, end);
  const d = b[j];
  return j === end || (j >= 0 && (isWs(d) || d === COMMA || d === RBRACE || d === RBRACKET)) ? j : no(i, 'invalid value');
}

/** Index just past the string whose opening quote is at `start` (loose: see `skipValueLoose`), or -1. */
export function stringEndLoose(b: Units, start: number, end: number): number {
  let from = start + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0 || q >= end) return no(start, 'unterminated string');
    let k = q - 1;
    while (k > start && b[k] === BACKSLASH) k--;
    // An even number of backslashes before the quote: it is not escaped.
    if (((q - 1 - k) & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just past the bracket closing the object or array that opens at `start` (loose), or -1. */
function containerEndLoose(b: Units, start: number, end: number): number {
  const closers: number[] = [b[start] === LBRACE ? RBRACE : RBRACKET];
  let j = start + 1;
  while (j < end) {
    const c = b[j];
    if (c === QUOTE) {
      j = stringEndLoose(b, j, end);
      if (j < 0) return -1;
      continue;
    }
    if (c === LBRACE) closers.push(RBRACE);
    else if (c === LBRACKET) closers.push(RBRACKET);
    else if (c === RBRACE || c === RBRACKET) {
      if (closers.pop() !== c) return no(j, 'mismatched bracket');
      if (closers.length === 0) return j + 1;
    }
    j++;
  }
  return no(start, 'unterminated object or array');
}
