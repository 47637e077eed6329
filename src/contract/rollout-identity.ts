/**
 * The logical identity of a rollout in a NeMo Gym managed run (newer NeMo Gym's
 * `logical_rollout_id`, built on `maybe_rollout_id_from_run_body`): the row's explicit
 * `_ng_rollout_id`, else `"<task>-<rollout>"` from its two indices printed as Python prints them.
 * The attempt number is not part of it: `_ng_attempt_index` (0 when absent) numbers the attempts.
 */
import { pyFloatRepr } from './python-repr.js';

const ROLLOUT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const ATTEMPT_SUFFIX = /-a[1-9][0-9]*$/;
const INT_TEXT = /^-?(?:0|[1-9]\d*)$/;

/** Python's `str()` of a JSON scalar given as its raw text (`1` → "1", `1.0` → "1.0", `true` → "True"), or null for `null`. */
export function pyStrOfRaw(raw: string): string | null {
  const t = raw.trim();
  if (t === 'null') return null;
  if (t === 'true') return 'True';
  if (t === 'false') return 'False';
  if (INT_TEXT.test(t)) return t === '-0' ? '0' : BigInt(t).toString();
  if (t.startsWith('"')) return JSON.parse(t) as string;
  const n = Number(t);
  if (Number.isFinite(n)) return pyFloatRepr(n);
  throw new Error(`not a scalar: ${t.slice(0, 40)}`);
}

/**
 * The identity from the raw texts of `_ng_rollout_id`, `_ng_task_index` and `_ng_rollout_index`
 * (undefined when absent). Returns null when the row has neither an id nor both indices; throws
 * an Error naming the problem for an id NeMo Gym rejects.
 */
export function logicalRolloutId(raw: { rolloutId?: string; task?: string; rollout?: string }): string | null {
  let id: string | null;
  const explicit = raw.rolloutId === undefined ? null : (JSON.parse(raw.rolloutId) as unknown);
  if (explicit !== null) {
    if (typeof explicit !== 'string' || !ROLLOUT_ID.test(explicit))
      throw new Error(`_ng_rollout_id must be a string of letters, digits, dots, dashes or underscores, got ${raw.rolloutId}`);
    id = explicit;
  } else {
    const task = raw.task === undefined ? null : pyStrOfRaw(raw.task);
    const rollout = raw.rollout === undefined ? null : pyStrOfRaw(raw.rollout);
    if (task === null || rollout === null) return null;
    id = `${task}-${rollout}`;
  }
  if (!ROLLOUT_ID.test(id) || ATTEMPT_SUFFIX.test(id))
    throw new Error(`rollout id '${id}' is not a valid identity (it must not end in -a<N>)`);
  return id;
}
