/**
 * Python truthiness (`bool(x)`) of JSON values, as NeMo Gym applies it to `_ng_no_persist`,
 * `_ng_failure_terminal` and `response.usage`.
 */

/** `bool(value)` in Python for a parsed JSON value: `None`, `False`, `0`, `0.0`, `''`, `[]`, `{}` are false. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** `bool(orjson.loads(raw))` computed from the raw text of one valid JSON value. */
export function rawTruthy(raw: string): boolean {
  const t = raw.trim();
  if (t === 'null' || t === 'false' || t === '""') return false;
  const c = t.charCodeAt(0);
  if (c === 0x7b || c === 0x5b) return t.slice(1, -1).trim().length > 0; // {} or [] with whitespace
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return Number(t) !== 0;
  return true;
}
