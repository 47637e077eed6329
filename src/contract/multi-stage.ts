/**
 * NeMo Gym 0.7.0 refuses `--judge-failed-only` on multi-stage rollouts: their rows carry
 * `stage_index`, and recovering them outside the multi-stage collection would lose the stage's
 * identity and its adaptive reference set. Which rows refuse, decided on raw text.
 */
import { INVALID_JUDGE_RESPONSE_KEY, STAGE_INDEX_KEY } from './keys.js';
import { topLevelSpans } from './json-spans.js';
import { rawTruthy } from './python-truthiness.js';

/** A file recovery takes rows from, and whether only its invalid-judge rows count. */
export interface RecoverySource {
  path: string;
  /** Only rows with a truthy `invalid_judge_response` count (the rollouts file, with that flag). */
  invalidJudgeRowsOnly: boolean;
}

/**
 * True when a line of a recovery source refuses recovery: a JSON object with a top-level
 * `stage_index` (any value, `null` included) and, when `invalidJudgeRowsOnly`, a truthy
 * `invalid_judge_response`. A line that is not one JSON object is not decided here (false): the
 * plan reports it.
 */
export function refusesRecovery(text: string, invalidJudgeRowsOnly: boolean): boolean {
  // A key can only be spelled otherwise with a \u escape: most lines are passed over unscanned.
  if (!text.includes(`"${STAGE_INDEX_KEY}"`) && !text.includes('\\u')) return false;
  let spans;
  try {
    spans = topLevelSpans(text);
  } catch {
    return false;
  }
  if (!spans.has(STAGE_INDEX_KEY)) return false;
  if (!invalidJudgeRowsOnly) return true;
  const flag = spans.get(INVALID_JUDGE_RESPONSE_KEY);
  return flag !== undefined && rawTruthy(text.slice(flag.start, flag.end));
}
