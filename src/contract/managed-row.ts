/**
 * What a managed run's reader needs of one saved row, read from its top level without parsing the
 * rest: its logical identity and attempt number, its run id, and what kind of outcome it is.
 */
import {
  ATTEMPT_INDEX_KEY,
  FAILURE_CLASS_KEY,
  FAILURE_TERMINAL_KEY,
  OMITTED_KEY,
  ROLLOUT_ID_KEY,
  ROLLOUT_INDEX_KEY,
  RUN_ID_KEY,
  SKIPPED_CLASS,
  TASK_INDEX_KEY,
} from './keys.js';
import { topLevelSpans } from './json-spans.js';
import { rawTruthy } from './python-truthiness.js';
import { logicalRolloutId } from './rollout-identity.js';

export interface ManagedRowFacts {
  identity: string;
  /** `_ng_attempt_index` as saved, or null when the row has none (attempt 0, or numbered by a legacy import). */
  attempt: number | null;
  /** `_ng_run_id`: undefined when absent. */
  runId: string | null | undefined;
  /** `_ng_failure_class` is set (not null): an outcome for the sidecar. */
  failure: boolean;
  failureClass: unknown;
  terminal: boolean;
  omitted: boolean;
  /** Raw texts of the two indices, compared with the materialized row's. */
  task?: string;
  rollout?: string;
}

/** The facts of one row; throws an Error with the reason when the row is not an object or has no valid identity. */
export function managedRowFacts(text: string): ManagedRowFacts {
  const spans = topLevelSpans(text);
  const raw = (key: string): string | undefined => {
    const s = spans.get(key);
    return s === undefined ? undefined : text.slice(s.start, s.end);
  };
  const task = raw(TASK_INDEX_KEY);
  const rollout = raw(ROLLOUT_INDEX_KEY);
  const identity = logicalRolloutId({ rolloutId: raw(ROLLOUT_ID_KEY), task, rollout });
  if (identity === null) throw new Error(`the row has neither ${ROLLOUT_ID_KEY} nor both ${TASK_INDEX_KEY} and ${ROLLOUT_INDEX_KEY}`);
  const attemptRaw = raw(ATTEMPT_INDEX_KEY);
  const attempt = attemptRaw === undefined ? null : (JSON.parse(attemptRaw) as unknown);
  if (attempt !== null && !(typeof attempt === 'number' && Number.isInteger(attempt) && attempt >= 0))
    throw new Error(`${ATTEMPT_INDEX_KEY} must be a non-negative integer, got ${attemptRaw}`);
  const runIdRaw = raw(RUN_ID_KEY);
  const classRaw = raw(FAILURE_CLASS_KEY);
  const failureClass = classRaw === undefined ? null : (JSON.parse(classRaw) as unknown);
  return {
    identity,
    attempt,
    runId: runIdRaw === undefined ? undefined : (JSON.parse(runIdRaw) as string | null),
    failure: failureClass !== null,
    failureClass,
    terminal: rawTruthy(raw(FAILURE_TERMINAL_KEY) ?? 'null'),
    omitted: rawTruthy(raw(OMITTED_KEY) ?? 'null'),
    task,
    rollout,
  };
}

/** The disposition a saved outcome gives its rollout when it is the latest allocated attempt's. */
export function outcomeDisposition(
  f: Pick<ManagedRowFacts, 'failure' | 'failureClass' | 'terminal' | 'omitted'>,
): 'success' | 'failure' | 'omitted' {
  if (f.omitted || (f.failureClass === SKIPPED_CLASS && f.terminal)) return 'omitted';
  return f.failure ? 'failure' : 'success';
}
