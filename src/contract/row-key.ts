/**
 * Row keys: the pair (`_ng_task_index`, `_ng_rollout_index`), compared the way Python compares
 * the tuple NeMo Gym builds from a parsed row (spec §7 "Duplicate keys").
 */
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from './keys.js';
import { topLevelSpans } from './json-spans.js';
import { pythonRepr } from './python-repr.js';

/** One half of a key: a JSON scalar as parsed. */
export type KeyPart = number | string | boolean | null;

/** The (task, rollout) key of a row. */
export interface RowKey {
  task: KeyPart;
  rollout: KeyPart;
}

function asKeyPart(v: unknown): KeyPart | undefined {
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return undefined;
}

/**
 * The key of a parsed row, or `null` when either index is missing or `null` (NeMo Gym's
 * "both indices" rule for output, sidecar and seeding lines). Object or array indices, which Python
 * could not hash, also give `null`; validate rows with `row-shapes.ts` to report them instead.
 * Indices above 2^53 are already rounded by `JSON.parse`: use `rawKeyId` for exact ids.
 */
export function keyOf(row: Record<string, unknown>): RowKey | null {
  const task = asKeyPart(row[TASK_INDEX_KEY]);
  const rollout = asKeyPart(row[ROLLOUT_INDEX_KEY]);
  if (task === undefined || task === null || rollout === undefined || rollout === null) return null;
  return { task, rollout };
}

/**
 * The key of a parsed row with missing indices read as `null` (the recovery predicate of §4.6 and
 * `gym eval aggregate` read keys this way). Non-scalar indices also read as `null`.
 */
export function keyWithNullDefaults(row: Record<string, unknown>): RowKey {
  return { task: asKeyPart(row[TASK_INDEX_KEY]) ?? null, rollout: asKeyPart(row[ROLLOUT_INDEX_KEY]) ?? null };
}

/** Canonical id of a number: the exact decimal of an integral value, else the shortest repr. */
function numberId(n: number): string {
  if (Number.isInteger(n)) return BigInt(n).toString();
  return String(n);
}

function partId(p: KeyPart): string {
  if (p === null) return 'z';
  if (typeof p === 'boolean') return p ? '1' : '0';
  if (typeof p === 'number') return numberId(p);
  return 's' + p;
}

/**
 * A canonical string for a key, for Maps and Sets, equal exactly when Python's tuples are equal:
 * `1`, `1.0` and `true` are the same part (Python `True == 1`), `"1"` differs, `null` is `None`.
 */
export function keyId(key: RowKey): string {
  return JSON.stringify([partId(key.task), partId(key.rollout)]);
}

const INT_TEXT = /^-?(?:0|[1-9]\d*)$/;

/**
 * Canonical part id from a raw JSON value text (a top-level span), exact for integers of any size:
 * `rawPartId("12345678901234567891")` differs from `rawPartId("12345678901234567890")`. Gives the
 * same id as `keyId` does for the parsed value whenever that value is exact. Returns `null` for
 * non-scalar values.
 */
export function rawPartId(raw: string): string | null {
  const t = raw.trim();
  // Below 10^15 the text of an integer is already its canonical decimal (JSON has no leading zeros), but for -0.
  if (INT_TEXT.test(t)) return t.length < 16 && t !== '-0' ? t : BigInt(t).toString();
  const c = t.charCodeAt(0);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    const n = Number(t);
    return Number.isFinite(n) ? numberId(n) : null;
  }
  if (t === 'true') return '1';
  if (t === 'false') return '0';
  if (t === 'null') return 'z';
  if (c === 0x22) return 's' + (JSON.parse(t) as string);
  return null;
}

/**
 * `keyId` computed from the raw texts of the two index values, exact for big integers.
 * Returns `null` when either part is not a JSON scalar or is `null` (no key).
 */
export function rawKeyId(taskRaw: string, rolloutRaw: string): string | null {
  const task = rawPartId(taskRaw);
  const rollout = rawPartId(rolloutRaw);
  if (task === null || rollout === null || task === 'z' || rollout === 'z') return null;
  return JSON.stringify([task, rollout]);
}

/** Raw texts of the two index values of one JSONL line, or `null` if the line is blank or lacks either. */
function rawIndices(line: string): [string, string] | null {
  if (line.trim() === '') return null;
  const spans = topLevelSpans(line);
  const t = spans.get(TASK_INDEX_KEY);
  const r = spans.get(ROLLOUT_INDEX_KEY);
  if (t === undefined || r === undefined) return null;
  return [line.slice(t.start, t.end), line.slice(r.start, r.end)];
}

/**
 * The key of one output/sidecar JSONL line (NeMo Gym `_parse_output_line_key`, §6 checks 51–53):
 * a trailing newline is fine; a blank line, or a row without both indices (or with a `null` one),
 * has no key. Only the two index values are parsed. Throws `SyntaxError` on a line that is not a
 * JSON object.
 */
export function lineKey(line: string): RowKey | null {
  const raw = rawIndices(line);
  if (raw === null) return null;
  return keyOf({ [TASK_INDEX_KEY]: JSON.parse(raw[0]) as unknown, [ROLLOUT_INDEX_KEY]: JSON.parse(raw[1]) as unknown });
}

/** `keyId` of one JSONL line's key, exact for integers above 2^53; `null` when `lineKey` would be `null`. */
export function lineKeyId(line: string): string | null {
  const raw = rawIndices(line);
  return raw === null ? null : rawKeyId(raw[0], raw[1]);
}

/** Python tuple style, as NeMo Gym would print the key: `(3, 1)`, `('a', None)`. */
export function formatKey(key: RowKey): string {
  return `(${pythonRepr(key.task)}, ${pythonRepr(key.rollout)})`;
}

/** A part as Python prints it; an integer that `JSON.parse` rounded takes its digits from `exactId` (a part id). */
function formatPart(p: KeyPart, exactId: string): string {
  if (typeof p === 'number' && Number.isInteger(p) && !Number.isSafeInteger(p) && INT_TEXT.test(exactId)) return exactId;
  return pythonRepr(p);
}

/**
 * `formatKey` with the exact digits of integers above 2^53: `id` is the key's exact id (`rawKeyId`,
 * `lineKeyId`), the parsed `key` gives everything else (`True` stays `True`).
 */
export function formatKeyExactly(key: RowKey, id: string): string {
  const [task, rollout] = JSON.parse(id) as [string, string];
  return `(${formatPart(key.task, task)}, ${formatPart(key.rollout, rollout)})`;
}

/** The key of one JSONL line for messages, exact for integers of any size; `null` when the line has none. */
export function formatLineKey(line: string): string | null {
  const key = lineKey(line);
  const id = lineKeyId(line);
  return key === null || id === null ? null : formatKeyExactly(key, id);
}

/** Sort rank of a part's type: null, then numbers (booleans count as 0/1), then strings. */
function rank(p: KeyPart): number {
  if (p === null) return 0;
  return typeof p === 'string' ? 2 : 1;
}

function comparePart(a: KeyPart, b: KeyPart): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ra === 2) return compareCodePoints(a as string, b as string);
  return 0;
}

/** Compares strings by Unicode code point, like Python (JS `<` compares UTF-16 code units). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * Sort order of keys: by task, then rollout, ascending (spec §4.11). Numbers compare numerically
 * (booleans as 0/1, `1` equals `1.0`). Python cannot order mixed types (NeMo Gym's final sort
 * crashes on a string index among numbers); we do not crash but order `null` (missing) first, then
 * numbers, then strings (by code point).
 */
export function compareKeys(a: RowKey, b: RowKey): number {
  return comparePart(a.task, b.task) || comparePart(a.rollout, b.rollout);
}
