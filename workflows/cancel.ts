import { CancellationScope, CancelledFailure, condition, isCancellation } from '@temporalio/workflow';
import type { Phase } from '../src/contract/run-spec.js';
import { cleanup } from './activity-proxies.js';
import { innermostMessage } from './failures.js';
import type { InFlight, RunState } from './run-state.js';
import { enterPhase } from './details.js';
import { recordUnstarted } from './coverage.js';

/** Phases in which the recorded lengths are the outputs' committed lengths (the outputs are open). */
const COMMITTING_PHASES: Phase[] = ['verify', 'rejudge-wait', 'upload', 'aggregate', 'done'];

/**
 * A run cancelled by an operator (`reverify cancel`), whatever it waited on: wait until every batch
 * in flight has stopped (activities are cancelled with WAIT_CANCELLED: they see the cancellation at
 * their next heartbeat, or at once between retries), cut the outputs back to the last recorded
 * commit (a commit interrupted half-way may have left bytes past it), and remove the work directory:
 * the next run, with --resume, plans again from the outputs. Returns the failure that ends the
 * workflow as cancelled. A cleanup that fails is said in the messages; the run still ends cancelled.
 */
export async function endCancelled(st: RunState, inflight: Map<number, InFlight>, err: unknown): Promise<unknown> {
  const phase = st.phase;
  enterPhase(st, 'cancelling');
  st.messages.push(
    `Cancelling: ${inflight.size > 0 ? `waiting for the ${inflight.size} batch(es) in flight to stop, then ` : ''}` +
      'cutting the outputs back to the last commit and removing the work directory',
  );
  await CancellationScope.nonCancellable(async () => {
    await condition(() => inflight.size === 0);
    const outputs = st.outputs;
    if (outputs === null) return;
    try {
      if (COMMITTING_PHASES.includes(phase)) {
        await cleanup.commitBatches.executeWithOptions({ summary: 'cancel: cut the outputs back to the last recorded commit' }, [
          { outputs, mainLength: st.mainLength, sidecarLength: st.sidecarLength, mainParts: [], sidecarParts: [], obsolete: [] },
        ]);
      }
      await recordUnstarted(st, cancelReason(st));
      await cleanup.removeWorkDir.executeWithOptions({ summary: 'cancel: remove the work directory' }, [outputs.workDir]);
    } catch (cleanupErr) {
      st.messages.push(
        `Cancelled, but the cleanup failed: ${innermostMessage(cleanupErr)}; run the same command with --resume to continue`,
      );
    }
  });
  return isCancellation(err) ? err : new CancelledFailure('the run was cancelled');
}

/** Why the rollouts a cancelled run never started were left (`record_unstarted`'s reason). */
function cancelReason(st: RunState): string {
  return st.budgetPaused
    ? `the request budget was spent (${st.requestsUsed} of --max-requests ${st.maxRequests} /verify requests made) and the run was cancelled`
    : 'the run was cancelled';
}
