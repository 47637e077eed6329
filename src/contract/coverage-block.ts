/**
 * The coverage as the user reads it (src/contract/coverage.ts holds the counting): the printed
 * coverage block of `reverify run` and `reverify status`, and what is missing from the score, which
 * the block's verdict, the `Incomplete:` lines and the exit status share.
 */
import type { Coverage } from './coverage.js';
import { stoppedEarlyText } from './stop-rules.js';

/**
 * The rollouts missing from the score, by what brings them back: `resumable` ones a `--resume`
 * runs again (retryable failures, results not persisted, never dispatched); `atCap` ones only
 * `--resume --extend-attempts N` reopens (failures at the attempt cap). Successes, omissions and
 * terminal failures are not missing. The run's exit status is 3 when either is not zero.
 */
export interface MissingFromScore {
  resumable: number;
  atCap: number;
}

export function missingFromScore(cov: Coverage): MissingFromScore {
  return { resumable: cov.retryable + cov.unknown + cov.never_dispatched, atCap: cov.attempts_exhausted };
}

/**
 * The coverage as one printed block (end of `reverify run`, `reverify status`). `live`: the run is
 * still writing the files (`status` of a running run): nothing to resume.
 */
export function coverageBlock(cov: Coverage, path: string, live = false): string[] {
  const pct = `${Math.round(cov.completion_fraction * 1000) / 10}%`;
  return [
    `Coverage (${path}):`,
    `  ${cov.expected} expected: ${cov.successful} successful, ${cov.failed} failed, ${cov.intentionally_omitted} intentionally omitted, ` +
      `${cov.unknown} unknown, ${cov.never_dispatched} never dispatched`,
    `  ${cov.attempts} attempts, ${cov.counted_failures} counted failures; ${cov.attempts_exhausted} at the attempt cap, ${cov.retryable} retryable; ` +
      `attempt cap ${cov.attempt_cap} (${cov.max_rollout_attempts} saved + ${cov.attempt_extension} extension)`,
    `  ${completeText(cov, pct, live)}; ${cov.outcomes_recorded} outcome row(s) recorded by this run`,
    ...(cov.stopped_early
      ? [`  ${stoppedEarlyText(cov.stopped_early)} (--stop-when); the rollouts never started: --resume without --stop-when verifies them`]
      : []),
  ];
}

/**
 * The block's verdict, in the words of the `Incomplete:` lines and the exit status: "complete"
 * only when no rollout is missing from the score. The seed's `complete` (nothing pending) is also
 * true when every missing rollout is at the attempt cap: then the block says what is missing.
 */
function completeText(cov: Coverage, pct: string, live: boolean): string {
  if (!cov.complete)
    return `${pct} complete${live ? ' so far (the run is still writing)' : ' (not complete: run the same command with --resume)'}`;
  if (cov.attempts_exhausted === 0) return `${pct} complete`;
  // Still writing: the advice waits for the run's end (`--resume` would attach to the live run).
  if (live)
    return `not complete so far: ${cov.attempts_exhausted} rollout(s) at the attempt cap are missing from the score (the run is still writing)`;
  return (
    `not complete: ${cov.attempts_exhausted} rollout(s) at the attempt cap are missing from the score ` +
    '(nothing is pending below it; run the same command with --resume --extend-attempts N)'
  );
}
