/**
 * Re-verification of selected saved (scored) rows from their saved answers: the one mechanism behind
 * `--noise-sample` (noise-sample.ts) and `--rejudge-saved` (rejudge-saved.ts). The rows' plan comes
 * from `planSelected` (activities/plan-selected.ts); its batches are `verifyBatch` activities, sent
 * one after another on the run's concurrency, each counted in the request budget (a batch launched
 * with nothing left of it is not launched: the re-verification is cut short), their files named by
 * the use's tag so that no round reads them. What becomes of a finished batch is the use's `commit`.
 */
import type { BatchResult, PlanSummary, RunSpec } from '../src/contract/run-spec.js';
import type { Selection } from '../src/planning/selected-rows.js';
import { long } from './activity-proxies.js';
import { batchRequest } from './batch-request.js';
import { batchAllowance, requestsLeft } from './budget.js';
import type { RunState } from './run-state.js';

/** Which use: its tag (file names), the operation id prefix of a settlement (absent: nothing settles), what its summaries say. */
export interface SelectedUse {
  tag: 'noise' | 'saved';
  operation?: string;
  what: string;
}

/** The plan of the selected rows of `outputs.output` in [from, to) (activities/plan-selected.ts). */
export function planSelected(spec: RunSpec, st: RunState, use: SelectedUse, selection: Selection, from: number) {
  return long.planSelected.executeWithOptions({ summary: `${use.what}: select the saved rows` }, [
    {
      output: st.outputs!.output,
      from,
      to: st.mainLength,
      inputsPath: spec.inputsPath,
      routing: spec.routing,
      selection,
      workDir: st.outputs!.workDir,
      tag: use.tag,
    },
  ]);
}

/**
 * Sends the plan's rows batch by batch; `commit` takes each finished batch. Returns whether every
 * batch ran (false: the request budget was spent first; the rows not re-verified are left as they are).
 */
export async function reverifySelected(
  spec: RunSpec,
  st: RunState,
  plan: PlanSummary,
  use: SelectedUse,
  commit: (r: BatchResult) => Promise<void>,
): Promise<boolean> {
  const batches = Math.ceil(plan.rows / spec.batchSize);
  for (let batch = 0; batch < batches; batch++) {
    const from = batch * spec.batchSize;
    const to = Math.min(plan.rows, from + spec.batchSize);
    const slots = Math.max(1, Math.min(st.effective, to - from));
    const left = requestsLeft(st, []);
    if (left <= 0) return false;
    const allowance = st.maxRequests === null ? undefined : batchAllowance(to - from, slots, left);
    const launch = {
      batch,
      index: batch,
      of: batches,
      round: st.round,
      plan,
      from,
      to,
      slots,
      allowance,
      held: false,
      operation: use.operation,
    };
    const request = { ...batchRequest(spec, { ...st, estimate: null }, launch), tag: use.tag };
    const r = await long.verifyBatch.executeWithOptions(
      {
        summary: `${use.what}: verify rows ${from}..${to - 1} (batch ${batch + 1}/${batches})`,
        heartbeatTimeout: spec.heartbeatTimeoutMs,
        allowEagerDispatch: false,
      },
      [request],
    );
    st.requestsUsed += r.requestsUsed ?? 0;
    if (r.held) return false;
    await commit(r);
  }
  return true;
}
