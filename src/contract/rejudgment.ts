/**
 * Re-judgments as the newer NeMo Gym run store settles them (`admit_rejudgment`,
 * `record_rejudgment`, `withdraw_rejudgment`): a judge failure is judged again from its saved answer,
 * without re-running the model. Each re-judgment is an operation with a deterministic id, admitted
 * when the workflow schedules its batch (the history records it before the judge is called) and
 * settled exactly once when that batch is committed. Pure: what the settled row is, and whether an
 * answer settles at all.
 */
import { rawField, scanObject, setFieldsScanned, topLevelSpans } from './json-spans.js';
import { stampFields, type Stamps } from './outcome.js';
import { ATTEMPT_INDEX_KEY, OPERATION_ID_KEY, RESPONSE_KEY, ROLLOUT_ID_KEY, RUN_ID_KEY } from './keys.js';

/** Keys a settled row drops, by prefix: the failure's and the admission's bookkeeping. */
export const REJUDGE_DROPPED_PREFIXES = ['_ng_failure', '_ng_rejudge'] as const;

/**
 * The failure's identity a settled row keeps, beyond the task and rollout indices (stamped on every
 * result from the judged row): a managed run's run, rollout and attempt, when the saved row has them.
 */
const IDENTITY_KEYS = [RUN_ID_KEY, ROLLOUT_ID_KEY, ATTEMPT_INDEX_KEY] as const;

/**
 * The operation id prefix of one re-judgment round of a run: the run's first Temporal run id (the
 * same across continue-as-new and activity retries) and the round, 1-based as the CLI prints it.
 */
export function operationPrefix(firstRunId: string, round: number): string {
  return `${firstRunId}/r${round + 1}`;
}

/** The id of the re-judgment of one rollout: `<prefix>/<task>.<rollout>` (the indices' JSON texts). */
export function operationId(prefix: string, taskRaw: string, rolloutRaw: string): string {
  return `${prefix}/${taskRaw}.${rolloutRaw}`;
}

/**
 * Whether a successful answer carries a grade (a `reward` that is not null). An answer without one
 * settles nothing: the admission is withdrawn, the failure stays selected, a later pass judges it again.
 */
export function isGraded(result: Record<string, unknown>): boolean {
  return result.reward !== undefined && result.reward !== null;
}

/**
 * The row that settles a judge failure: the new verdict (its grading keys) with the failure's
 * identity and saved answer (`response`) taken from what was judged, the `_ng_failure*` and
 * `_ng_rejudge*` keys dropped, and the operation id. `judged` is the `/verify` body that was sent
 * (the saved answer) and `saved` the row it came from (the failure row in `--judge-failed-only`, the
 * rollout in a re-judgment round). The verdict is stamped here too (`stampResult`'s fields), so its
 * text is scanned once.
 */
export function settledRow(verdictRaw: string, stamps: Stamps, judgedRaw: string, savedRaw: string, opId: string): string {
  const verdict = scanObject(verdictRaw);
  const remove = verdict.members.map((m) => m.key).filter((k) => REJUDGE_DROPPED_PREFIXES.some((p) => k.startsWith(p)));
  const saved = topLevelSpans(savedRaw);
  const fields: Array<[string, string]> = stampFields(stamps);
  for (const key of IDENTITY_KEYS) {
    const span = saved.get(key);
    if (span !== undefined) fields.push([key, savedRaw.slice(span.start, span.end)]);
  }
  const response = rawField(judgedRaw, RESPONSE_KEY);
  if (response !== undefined) fields.push([RESPONSE_KEY, response]);
  fields.push([OPERATION_ID_KEY, JSON.stringify(opId)]);
  return setFieldsScanned(verdictRaw, verdict, fields, remove);
}
