/**
 * The verify phase of one round: a sliding window of `verifyBatch` activities whose `/verify`
 * slots never exceed the run's ceiling, each finished batch committed exactly once (in batch
 * order within each commit), and continue-as-new between batches when the history grows. The
 * window's state and transitions are in round-window.ts; this is its loop.
 */
import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { RunSpec } from '../src/contract/run-spec.js';
import { enterPhase, showDetails } from './details.js';
import { RoundWindow } from './round-window.js';
import type { InFlight, RunState } from './run-state.js';

/**
 * One round: the sliding window of verifyBatch activities, with commits as batches finish. Returns
 * when its last batch ended (workflow time: the re-judgment delay counts from there, rejudge.ts).
 */
export async function verifyRound(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>): Promise<number> {
  enterPhase(st, 'verify');
  const w = new RoundWindow(spec, st, inflight);
  try {
    await windowLoop(w, st, inflight);
    w.endLoans();
    return w.endedAt ?? Date.now();
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) await w.commitHandedBack();
    throw err;
  }
}

/** Launch what fits, wait for something to do, commit what finished; fail or continue as new when due. */
async function windowLoop(w: RoundWindow, st: RunState, inflight: Map<number, InFlight>): Promise<void> {
  while (w.busy()) {
    w.launchAll();
    w.notePause();
    await condition(() => w.wakes());
    // Refill the window before committing, so freed slots do not wait for the commit's round trip.
    w.launchAll();
    // Whatever finished is committed, even when the run is about to fail: committed rows are kept.
    if (w.ready.length > 0) await w.commitReady();
    showDetails(st, inflight);
    if (w.failure) await w.fail();
    if (w.drained()) await w.continueAsNew();
  }
}
