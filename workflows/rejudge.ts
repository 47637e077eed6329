import { sleep } from '@temporalio/workflow';
import type { RunSpec } from '../src/contract/run-spec.js';
import { long } from './activity-proxies.js';
import type { RunState } from './run-state.js';
import { enterPhase } from './details.js';

/**
 * Re-judgment (beyond NeMo Gym, which needs a human to run --resume again): after a round with
 * judge failures, wait on a durable timer (doubling each round), then plan the keys that may still
 * be attempted as the next round. Each failed attempt has left exactly one sidecar row, so the files
 * end up as a NeMo Gym run followed by repeated `--resume` runs would leave them.
 */
export async function nextRound(spec: RunSpec, st: RunState): Promise<boolean> {
  // `rejudge` absent (a spec from before the flag existed) means on, so recorded runs replay the same.
  if (spec.rejudge === false || st.roundJudgeFailed === 0 || st.round + 1 >= (spec.maxAttempts ?? 1)) return false;
  const delayMs = spec.rejudgeDelayMs * 2 ** st.round;
  st.messages.push(
    `Re-judging: ${st.roundJudgeFailed} row(s) judge-failed in round ${st.round + 1}; ` +
      `round ${st.round + 2} (of at most ${spec.maxAttempts}) starts in ${Math.round(delayMs / 1000)}s`,
  );
  enterPhase(st, 'rejudge-wait');
  // Workflow time (deterministic): the progress query shows the time left; no command is added.
  st.rejudgeAt = Date.now() + delayMs;
  await sleep(delayMs, { summary: `wait ${Math.round(delayMs / 1000)}s before re-judgment round ${st.round + 2}` });
  st.rejudgeAt = undefined;
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
  if (next.rows === 0) return false;
  st.round++;
  st.plan = next;
  st.nextBatch = 0;
  st.roundJudgeFailed = 0;
  st.planned += next.rows;
  if (st.replannedPerAgent !== null)
    for (const [agent, rows] of Object.entries(next.rowsPerAgent)) st.replannedPerAgent[agent] = (st.replannedPerAgent[agent] ?? 0) + rows;
  return true;
}
