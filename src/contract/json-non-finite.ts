/**
 * Non-finite numbers in JSON replies. Python's `json` writes NaN and ±Infinity as the bare tokens
 * `NaN`, `Infinity`, `-Infinity` (not JSON); NeMo Gym writes them as `null` (orjson, spec §1.2).
 * Reverify does the same wherever it keeps a reply's numbers: each such token becomes `null`, so
 * the files it writes are JSON and read back the same whichever number was non-finite.
 */

/** The bare tokens Python's `json.dumps` writes for non-finite floats. */
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

/** A scalar token (outside strings) as it is written: `null` for a non-finite number, else itself. */
export function scalarToken(token: string): string {
  return NON_FINITE.has(token) ? 'null' : token;
}

/** The longest token `scalarToken` rewrites; a longer one is copied as it is. */
export const MAX_NON_FINITE_TOKEN = '-Infinity'.length;

/** `text` (JSON, perhaps with non-finite tokens) with each non-finite token outside strings as `null`. */
export function nonFiniteAsNull(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) => (m.startsWith('"') ? m : 'null'));
}
