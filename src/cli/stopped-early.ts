/**
 * The end of a run a `--stop-when` rule stopped early (workflows/stop-rules.ts): which rule fired
 * and where, the rollouts it left never started (not counted against the exit status: a clean early
 * stop is 0) and how to verify them, then the estimate at the end, which is the valid one: its
 * confidence sequences hold at every look, this one included (docs/statistics.md).
 */
import { estimateLines } from '../contract/estimate-text.js';
import { unstartedPath } from '../contract/file-names.js';
import type { RunResult } from '../contract/run-spec.js';
import { stoppedEarlyText } from '../contract/stop-rules.js';

/** Rollouts the stop rule left never started (0 when no rule fired, or without a coverage). */
export function leftByStop(result: RunResult): number {
  return result.stoppedEarly && result.coverage ? result.coverage.never_dispatched : 0;
}

/** The lines said at the end of a run stopped early; none otherwise. */
export function stoppedEarlyLines(result: RunResult): string[] {
  const stopped = result.stoppedEarly;
  if (!stopped) return [];
  const left = leftByStop(result);
  const text = stoppedEarlyText(stopped);
  const rest =
    left > 0
      ? `; ${left} rollout(s) never started are listed in ${unstartedPath(result.outputs.output)}: ` +
        'to verify them too, run the same command with --resume and without --stop-when'
      : '';
  return [`${text[0].toUpperCase()}${text.slice(1)} (--stop-when)${rest}`, ...(result.estimate ? estimateLines(result.estimate) : [])];
}
