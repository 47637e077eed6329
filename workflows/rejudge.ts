import { sleep } from '@temporalio/workflow';
import { rejudgeDelayMs } from '../src/config/run-defaults.js';
import { rejudgesInRounds, type RunSpec } from '../src/contract/run-spec.js';
import { long } from './activity-proxies.js';
import type { RunState } from './run-state.js';
import { enterPhase } from './details.js';

/**
 * Re-judgment (beyond NeMo Gym, which needs a human to run --resume again): after a round with
 * judge failures, plan the keys that may still be attempted as the next round, then (when there
 * are any) announce it and wait on a durable timer (a few seconds, doubling each round up to a
 * ceiling: `rejudgeDelayMs`). Planned first, so that no round is announced that will not run
 * (every key at the attempt cap). The delay counts from the round's last row selected for it (its
 * judge failure: `st.roundSelectedAt`), at the latest from `endedAt`, when the round's last batch
 * ended (workflow time): the round's slowest answers after it, its commit and the plan take part of
 * it, the timer only the rest. Each failed attempt has left exactly one sidecar row, so the
 * files end up as a NeMo Gym run followed by repeated `--resume` runs would leave them.
 */
export async function nextRound(spec: RunSpec, st: RunState, endedAt: number): Promise<boolean> {
  if (!rejudgesInRounds(spec) || st.roundJudgeFailed === 0 || st.round + 1 >= (spec.maxAttempts ?? 1)) return false;
  const next = await long.planRound.executeWithOptions({ summary: `plan re-judgment round ${st.round + 2}` }, [
    {
      workDir: st.outputs!.workDir,
      round: st.round,
      plan: st.plan!,
      sidecar: st.outputs!.sidecar,
      maxAttempts: spec.maxAttempts,
      retryTerminalTimeouts: spec.retryTerminalTimeouts,
    },
  ]);
  const failed = `Re-judging: ${st.roundJudgeFailed} row(s) judge-failed in round ${st.round + 1}`;
  if (next.rows === 0) {
    st.messages.push(`${failed}, each at the attempt cap (${spec.maxAttempts}): no round ${st.round + 2}`);
    return false;
  }
  const delayMs = rejudgeDelayMs(spec.rejudgeDelayMs, st.round);
  // Workflow time (deterministic): the progress query shows the time left; no command is added.
  st.rejudgeAt = Math.min(endedAt, st.roundSelectedAt ?? endedAt) + delayMs;
  // At least a millisecond: a timer of the history, however long the round's tail, commit and plan took.
  const left = Math.max(1, st.rejudgeAt - Date.now());
  const rows = next.rows === st.roundJudgeFailed ? '' : ` re-judges ${next.rows} of them and`;
  const starts = left < 500 ? 'starts now' : `starts in ${Math.round(left / 1000)}s`;
  st.messages.push(`${failed}; round ${st.round + 2} (of at most ${spec.maxAttempts})${rows} ${starts}`);
  enterPhase(st, 'rejudge-wait');
  const after = `${Math.round(delayMs / 1000)}s after round ${st.round + 1}'s last judge failure`;
  await sleep(left, { summary: `wait ${Math.round(left / 1000)}s (${after}) before re-judgment round ${st.round + 2}` });
  st.rejudgeAt = undefined;
  st.roundSelectedAt = undefined;
  // The main output's length before the first re-judged row: only rows past it can score a key
  // that this run routed to the sidecar (the terminal's end-of-run alarms, src/cli/missing-alarms.ts).
  st.mainAtRejudge ??= st.mainLength;
  st.round++;
  st.plan = next;
  st.nextBatch = 0;
  st.roundJudgeFailed = 0;
  st.planned += next.rows;
  if (st.replannedPerAgent !== null)
    for (const [agent, rows] of Object.entries(next.rowsPerAgent)) st.replannedPerAgent[agent] = (st.replannedPerAgent[agent] ?? 0) + rows;
  return true;
}
