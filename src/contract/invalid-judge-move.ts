/**
 * NeMo Gym 0.7.0's move of rows flagged `invalid_judge_response` out of a rollouts file into its
 * sidecar (recovery mode under `--retry-invalid-judge-responses`), row by row and on raw text: which
 * rows move, the identity that makes moving idempotent, and what a moved row looks like. The files
 * are rewritten by activities/move-invalid-judge-rows.ts.
 */
import { setFields, topLevelSpans, type Span } from './json-spans.js';
import {
  ATTEMPT_INDEX_KEY,
  FAILURE_CLASS_KEY,
  FAILURE_TERMINAL_KEY,
  INVALID_JUDGE_RESPONSE_KEY,
  JUDGE_INVALID_CLASS,
  MIGRATED_INVALID_JUDGE_KEY,
  REUSE_CACHED_DELIVERABLE_KEY,
  ROLLOUT_INDEX_KEY,
  STAGE_INDEX_KEY,
  TASK_INDEX_KEY,
} from './keys.js';
import { parsePythonInt } from './attempts.js';
import { pyTruthy, rawTruthy } from './python-truthiness.js';
import { rawPartId } from './row-key.js';

/** Files of a deliverables directory that are not deliverables (agent bookkeeping). */
export const NOT_DELIVERABLES: ReadonlySet<string> = new Set([
  'finish_params.json',
  'history.json',
  'history.pkl',
  'inprogress_history.json',
  'metadata.json',
  'log.txt',
  'reference_files',
]);

/** A row's top-level fields, scanned once (throws `SyntaxError` when the line is not one JSON object). */
export class RowFields {
  private readonly spans: Map<string, Span>;
  constructor(readonly text: string) {
    this.spans = topLevelSpans(text);
  }
  raw(key: string): string | undefined {
    const s = this.spans.get(key);
    return s === undefined ? undefined : this.text.slice(s.start, s.end);
  }
  truthy(key: string): boolean {
    const r = this.raw(key);
    return r !== undefined && rawTruthy(r);
  }
  value(key: string): unknown {
    const r = this.raw(key);
    return r === undefined ? undefined : JSON.parse(r);
  }
}

/** Whether a rollouts row moves to the sidecar: a truthy `invalid_judge_response`. */
export function isFlaggedInvalidJudge(row: RowFields): boolean {
  return row.truthy(INVALID_JUDGE_RESPONSE_KEY);
}

/** Whether a sidecar row was moved there (it carries the marker `_ng_migrated_invalid_judge_response`). */
export function isMovedRow(row: RowFields): boolean {
  return row.truthy(MIGRATED_INVALID_JUDGE_KEY);
}

/** Python `int(value or 0)` as a part id; values Python could not convert keep their JSON text. */
function countPart(row: RowFields, key: string): string {
  const v = row.value(key);
  if (!pyTruthy(v)) return '0';
  if (typeof v === 'number') return String(Math.trunc(v));
  if (v === true) return '1';
  if (typeof v === 'string') return String(parsePythonInt(v) ?? `s${v}`);
  return `j${row.raw(key)}`;
}

/**
 * The identity of a moved row, as 0.7.0 keys it: (stage, task, rollout, attempt), stage and
 * attempt 0 when absent. A rollouts row whose identity a sidecar row already carries with the
 * marker was moved before (by a run interrupted after writing the sidecar): it is dropped, not
 * moved twice.
 */
export function moveIdentity(row: RowFields): string {
  const part = (key: string) => {
    const r = row.raw(key);
    return r === undefined ? 'z' : (rawPartId(r) ?? `j${r}`);
  };
  return JSON.stringify([
    countPart(row, STAGE_INDEX_KEY),
    part(TASK_INDEX_KEY),
    part(ROLLOUT_INDEX_KEY),
    countPart(row, ATTEMPT_INDEX_KEY),
  ]);
}

/**
 * The sidecar row of a moved rollouts row: its text with `_ng_failure_class` set to
 * `judge_invalid` unless it has a truthy one, `_ng_failure_terminal` removed,
 * `reuse_cached_deliverable: true` when its deliverables directory still holds a deliverable (else
 * removed), and the marker `_ng_migrated_invalid_judge_response: true`. Other bytes are kept.
 */
export function movedRow(row: RowFields, hasCachedDeliverable: boolean): string {
  const fields: Array<[string, string]> = [];
  if (!row.truthy(FAILURE_CLASS_KEY)) fields.push([FAILURE_CLASS_KEY, JSON.stringify(JUDGE_INVALID_CLASS)]);
  if (hasCachedDeliverable) fields.push([REUSE_CACHED_DELIVERABLE_KEY, 'true']);
  fields.push([MIGRATED_INVALID_JUDGE_KEY, 'true']);
  const remove = [FAILURE_TERMINAL_KEY, ...(hasCachedDeliverable ? [] : [REUSE_CACHED_DELIVERABLE_KEY])];
  return setFields(row.text, fields, remove);
}
