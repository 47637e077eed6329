/**
 * The verify phase: a sliding window of `verifyBatch` activities whose `/verify` slots never
 * exceed the run's ceiling, each finished batch committed exactly once (in batch order within each
 * commit), re-judgment segments planned while older batches still answer, and continue-as-new
 * between batches when the history grows. The window's state and transitions are in
 * round-window.ts; this is its loop.
 */
import { CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { RunSpec } from '../src/contract/run-spec.js';
import { enterPhase, showDetails } from './details.js';
import { RoundWindow } from './round-window.js';
import type { InFlight, RunState } from './run-state.js';

/** Every round: the sliding window of verifyBatch activities, with commits as batches finish and re-judgment as they fail. */
export async function verifyRound(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>): Promise<void> {
  enterPhase(st, 'verify');
  const w = new RoundWindow(spec, st, inflight);
  try {
    await windowLoop(w, st, inflight);
    // The batches have ended: loans still out have nothing left to lend to.
    w.loans.end();
  } catch (err) {
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) await w.commitHandedBack();
    throw err;
  }
}

/**
 * Launch what fits, wait for something to do, commit what finished, plan what it selected for a
 * next round; fail or continue as new when due. Commits and plans take turns (a plan reads the
 * sidecar a commit appends to).
 */
async function windowLoop(w: RoundWindow, st: RunState, inflight: Map<number, InFlight>): Promise<void> {
  while (w.busy()) {
    w.launchAll();
    w.notePause();
    // Rows wait to be planned, not yet: a timer wakes the loop when the oldest may be.
    if (!w.planDue()) w.queue.armPlanTimer();
    w.queue.notePhase(inflight.size === 0);
    await condition(() => w.wakes());
    // Refill the window before committing, so freed slots do not wait for the commit's round trip.
    w.launchAll();
    // Whatever finished is committed, even when the run is about to fail: committed rows are kept.
    if (w.ready.length > 0) await w.commitReady();
    if (w.planDue()) await w.planNext();
    w.queue.notePhase(inflight.size === 0);
    showDetails(st, inflight);
    if (w.failure) await w.fail();
    if (w.drained()) await w.continueAsNew();
  }
}
