/**
 * Parse an HTTP `Retry-After` header (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date.
 * Returns milliseconds to wait (≥ 0), or undefined when absent or unparseable.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const seconds = Number(text);
    return Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
  }
  // An HTTP-date always names a month (`Sun, 06 Nov 1994 08:49:37 GMT`); this also keeps
  // Date.parse from reading things like "-5" as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
