/**
 * Re-judgments as the newer NeMo Gym run store settles them (`admit_rejudgment`,
 * `record_rejudgment`, `withdraw_rejudgment`): a judge failure is judged again from its saved answer,
 * without re-running the model. Each re-judgment is an operation with a deterministic id, admitted
 * when the workflow schedules its batch (the history records it before the judge is called) and
 * settled exactly once when that batch is committed. Pure: what the settled row is, and whether an
 * answer settles at all.
 */
import { rawField, scanObject, setFields, setFieldsScanned, topLevelSpans } from './json-spans.js';
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
 * The row that settles a judge failure. When the saved row is the failure row itself (a sidecar row
 * with `_ng_failure*` keys: `--judge-failed-only` plans from the sidecar) it is that row regraded
 * (`regradedRow`, the rule `settledSavedRow` follows too): fields the verifier does not echo are
 * kept. Otherwise (a re-judgment round of a run that verifies `--rollouts` rows) the failure row is
 * the previous round's stamped verdict, which this verdict replaces member for member, so the row is
 * the verdict with the failure's identity and saved answer (`response`) taken from what was judged,
 * the `_ng_failure*` and `_ng_rejudge*` keys dropped. Either way it carries the operation id, and
 * the verdict is stamped here (`stampResult`'s fields), so its text is scanned once. `judged` is the
 * `/verify` body that was sent (the saved answer) and `saved` the row it came from.
 */
export function settledRow(verdictRaw: string, stamps: Stamps, judgedRaw: string, savedRaw: string, opId: string): string {
  const saved = topLevelSpans(savedRaw);
  if ([...saved.keys()].some(isDropped)) return regradedRow(setFields(verdictRaw, stampFields(stamps)), savedRaw, opId);
  const verdict = scanObject(verdictRaw);
  const remove = verdict.members.map((m) => m.key).filter(isDropped);
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

/** A key a settled row drops (`REJUDGE_DROPPED_PREFIXES`). */
function isDropped(key: string): boolean {
  return REJUDGE_DROPPED_PREFIXES.some((p) => key.startsWith(p));
}

/**
 * The grading keys of a saved result (the run store's `_REJUDGE_GRADING_KEYS`; the seed page shows
 * the set truncated after `failure_kind`, `fai…`: this is the set inferred from it and from the
 * verdict fields NeMo Gym 0.7.0 reads): a settled re-verification replaces them, so a stale grade
 * (an `invalid_judge_response` flag, a `failure_kind`) never outlives the verdict that replaced it.
 */
export const REJUDGE_GRADING_KEYS: ReadonlySet<string> = new Set([
  'reward',
  'mask_sample',
  'evaluation_completed',
  'failure_kind',
  'failure_reason',
  'invalid_judge_response',
  'invalid_judge_retryable',
]);

/**
 * The row that settles the re-verification of a saved result (`--rejudge-saved`): the saved row
 * regraded (`regradedRow`).
 */
export function settledSavedRow(verdictRaw: string, savedRaw: string, opId: string): string {
  return regradedRow(verdictRaw, savedRaw, opId);
}

/**
 * The one settlement rule (the run store's `_REJUDGE_GRADING_KEYS`, `record_rejudgment`): the row
 * being settled (a judge failure's failure row, or a saved result) with its grading keys replaced —
 * its grading keys and `_ng_failure*`/`_ng_rejudge*` keys removed, then every member of the verdict
 * set (an existing key keeps its place) but the row's identity (run, rollout, attempt) and saved
 * answer (`response`), which it keeps — and the operation id. Fields the verifier does not echo
 * (capture fields, a user's own) are kept as they were, byte for byte.
 */
export function regradedRow(verdictRaw: string, savedRaw: string, opId: string): string {
  const saved = scanObject(savedRaw);
  const verdict = scanObject(verdictRaw);
  const own = new Set(saved.members.map((m) => m.key).filter((k) => KEPT_KEYS.has(k)));
  const fields: Array<[string, string]> = verdict.members
    .filter((m) => !isDropped(m.key) && !own.has(m.key))
    .map((m) => [m.key, verdictRaw.slice(m.valueStart, m.valueEnd)]);
  const fromVerdict = new Set(fields.map(([k]) => k));
  const remove = saved.members.map((m) => m.key).filter((k) => isDropped(k) || (REJUDGE_GRADING_KEYS.has(k) && !fromVerdict.has(k)));
  fields.push([OPERATION_ID_KEY, JSON.stringify(opId)]);
  return setFieldsScanned(savedRaw, saved, fields, remove);
}

/** What a settled row keeps of the row it settles whatever the verifier echoes: its identity and saved answer. */
const KEPT_KEYS: ReadonlySet<string> = new Set<string>([...IDENTITY_KEYS, RESPONSE_KEY]);

/**
 * The run store's `check_rejudgment` for a saved result: the row that would settle it with `verdictRaw`,
 * or null when it is settled already (the saved row carries this operation id). Throws, in one line,
 * when it cannot settle: the saved row is not a scored row with a saved answer (`response`).
 */
export function checkSavedRejudgment(savedRaw: string, verdictRaw: string, opId: string, where: string): string | null {
  const spans = topLevelSpans(savedRaw);
  const op = spans.get(OPERATION_ID_KEY);
  if (op !== undefined && savedRaw.slice(op.start, op.end) === JSON.stringify(opId)) return null;
  const problem = savedRowProblem(spans);
  if (problem !== null) throw new Error(`${where}: cannot settle a re-verification of this saved row: ${problem}`);
  return settledSavedRow(verdictRaw, savedRaw, opId);
}

/** Why a saved row cannot be re-verified from its saved answer (null: it can). */
export function savedRowProblem(spans: ReadonlyMap<string, unknown>): string | null {
  if (!spans.has(RESPONSE_KEY)) return 'it has no saved answer (`response`) to judge again';
  if ([...spans.keys()].some((k) => k.startsWith('_ng_failure')))
    return 'it is a failure row, not a scored result (see --judge-failed-only)';
  return null;
}

/** The operation id prefix of a run's re-verifications of saved results (`--rejudge-saved`). */
export function savedOperationPrefix(firstRunId: string): string {
  return `${firstRunId}/saved`;
}
