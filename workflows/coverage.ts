/**
 * The coverage phase (`<out stem>_coverage.json`): written when the outputs open, at the end, and
 * when the run fails or is cancelled (a step that always runs); nothing is written before the
 * outputs are open (bad input leaves nothing behind).
 */
import { CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { AttemptCap, Coverage, CoverageContext } from '../src/contract/coverage.js';
import type { RunSpec } from '../src/contract/run-spec.js';
import { cleanup, quick } from './activity-proxies.js';
import type { RunState } from './run-state.js';

/** The cap in force as saved with the run: the spec's, or (runs started before it) its `maxAttempts`. */
export function capOfSpec(spec: RunSpec): AttemptCap {
  return spec.attemptCap ?? { max_rollout_attempts: spec.maxAttempts, attempt_extension: 0 };
}

function request(spec: RunSpec, st: RunState, state: CoverageContext['state']) {
  return {
    outputs: { output: st.outputs!.output, sidecar: st.outputs!.sidecar },
    retryTerminalTimeouts: spec.retryTerminalTimeouts === true,
    context: {
      run_id: workflowInfo().workflowId,
      state,
      expected: st.expectedKeys,
      not_persisted: st.totals.dropped,
      outcomes_recorded: st.totals.main + st.totals.failed + st.seeded,
      cap: capOfSpec(spec),
      ...(spec.order === 'random' && spec.orderSeed !== undefined
        ? { plan_order: { order: 'random' as const, seed: spec.orderSeed } }
        : {}),
      ...(st.stoppedEarly ? { stopped_early: st.stoppedEarly } : {}),
      dispatch_longest_first: spec.dispatchLongestFirst === true,
      ...(st.inputIdentity ? { input_identity: st.inputIdentity } : {}),
    },
  };
}

/** When the outputs have just opened: the first coverage file (it also saves the attempt cap). */
export async function coverageAtOpen(spec: RunSpec, st: RunState): Promise<void> {
  if (st.outputs === null) return;
  st.coverageOpened = true;
  await quick.writeCoverage.executeWithOptions({ summary: 'coverage: outputs opened' }, [request(spec, st, 'open')]);
}

/** At the end, once every row is committed. */
export async function coverageAtEnd(spec: RunSpec, st: RunState): Promise<Coverage | null> {
  if (!st.coverageOpened) return null;
  return await quick.writeCoverage.executeWithOptions({ summary: 'coverage: finished' }, [request(spec, st, 'finished')]);
}

/**
 * When the run failed or was cancelled: written whatever the cancellation (non-cancellable), with a
 * few tries; a coverage file that cannot be written does not change how the run ends.
 */
export async function coverageOnFailure(spec: RunSpec, st: RunState, state: 'failed' | 'cancelled'): Promise<void> {
  if (!st.coverageOpened) return;
  // A cancelled run recorded them before its work directory (and plan) went (cancel.ts).
  if (state === 'failed') await recordUnstarted(st, 'the run failed before it started them');
  await CancellationScope.nonCancellable(async () => {
    try {
      await cleanup.writeCoverage.executeWithOptions({ summary: `coverage: ${state}` }, [request(spec, st, state)]);
    } catch {
      st.messages.push(`The coverage file could not be written after the run ${state}; it is written again by the next run`);
    }
  });
}

/**
 * A run ending early: the rollouts of its plan with no row in the outputs are saved in
 * `<stem>_unstarted.jsonl` (the seed's `record_unstarted`; activities/record-unstarted.ts), with
 * `reason`. Only the first plan can leave any (a later round plans keys that have sidecar rows).
 * Non-cancellable, a few tries; a failure is said in the messages and changes nothing else.
 */
export async function recordUnstarted(st: RunState, reason: string): Promise<void> {
  if (!st.coverageOpened || st.outputs === null) return;
  const outputs = { output: st.outputs.output, sidecar: st.outputs.sidecar };
  // The first plan (re-judgment plans are segments): its rollouts with no row in either output.
  const plan = st.plan;
  await CancellationScope.nonCancellable(async () => {
    try {
      const { rows, path } = await cleanup.recordUnstartedRows.executeWithOptions({ summary: 'record the rollouts never started' }, [
        {
          outputs,
          plan: plan && { planPath: plan.planPath, sourcePath: plan.sourcePath, rows: plan.rows, recordBytes: plan.recordBytes },
          reason,
        },
      ]);
      if (rows > 0) st.messages.push(`${rows} rollout(s) never started are recorded in ${path} (${reason}); --resume runs them`);
    } catch {
      st.messages.push('The rollouts never started could not be recorded; the coverage still counts them as never dispatched');
    }
  });
}
