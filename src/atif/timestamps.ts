/**
 * ATIF step timestamps, read as NeMo Gym 0.7.0 reads them (Python 3.11's `datetime.fromisoformat`
 * after `Z` becomes `+00:00`): calendar dates (`2026-03-01`, `20260301`), an optional time after
 * any one separator (`HH`, `HH:MM`, `HH:MM:SS`, fractions of any length, basic forms without
 * colons) and an optional UTC offset. ISO week dates (`2026-W09-7`) are not accepted here.
 */

const ISO =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:.(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?([+-]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?)?)?$/u;

interface Parsed {
  /** Microseconds since the epoch of the wall-clock time read as UTC. */
  wallMicros: bigint;
  /** The offset in microseconds, or null for a naive time. */
  offsetMicros: bigint | null;
}

function offsetMicros(text: string): bigint {
  const sign = text[0] === '-' ? -1n : 1n;
  const m = /^[+-](\d{2}):?(\d{2})?:?(\d{2})?(?:[.,](\d+))?$/.exec(text)!;
  const micros = BigInt((m[4] ?? '').padEnd(6, '0').slice(0, 6));
  const total = ((BigInt(m[1]) * 60n + BigInt(m[2] ?? 0)) * 60n + BigInt(m[3] ?? 0)) * 1_000_000n + micros;
  return sign * total;
}

function parse(value: string): Parsed | string {
  const text = value.replace(/Z/g, '+00:00');
  const m = ISO.exec(text);
  if (!m) return `Invalid isoformat string: '${value}'`;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  // Date.UTC maps years 0..99 to 1900..1999; set the year back before comparing.
  if (year < 100) check.setUTCFullYear(year);
  const sane =
    check.getUTCFullYear() === year &&
    check.getUTCMonth() === month - 1 &&
    check.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60 &&
    year >= 1;
  if (!sane) return `Invalid isoformat string: '${value}'`;
  const utcMs = year < 100 ? check.getTime() : ms;
  const micros = BigInt(frac.padEnd(6, '0').slice(0, 6));
  const offset = tz === undefined ? null : offsetMicros(tz);
  if (offset !== null && (offset >= 86_400_000_000n || offset <= -86_400_000_000n)) return `Invalid isoformat string: '${value}'`;
  return { wallMicros: BigInt(utcMs) * 1000n + micros, offsetMicros: offset };
}

/** Why `value` is not an ISO 8601 timestamp NeMo Gym accepts, or null when it is. */
export function isoTimestampProblem(value: string): string | null {
  const p = parse(value);
  return typeof p === 'string' ? `invalid ISO 8601 timestamp: ${p}` : null;
}

/** Python's `timestamp()` of an aware timestamp: seconds since the epoch (microsecond precision); null when naive. */
export function epochSeconds(value: string): number | null {
  const p = parse(value);
  if (typeof p === 'string' || p.offsetMicros === null) return null;
  return Number(p.wallMicros - p.offsetMicros) / 1e6;
}
