/** The run's end: aggregate (bounded: a failure ends the run with the rows complete), clean up, report. */
import { ActivityFailure, CancellationScope, patched } from '@temporalio/workflow';
import { computingAggregateMetrics, disableAggregationNotice } from '../src/contract/messages.js';
import type { RunResult, RunSpec } from '../src/contract/run-spec.js';
import { AGGREGATION_MAX_ATTEMPTS, aggregation, aggregationRetry, quick } from './activity-proxies.js';
import { innermostMessage } from './failures.js';
import { keysMissing, type RunState } from './run-state.js';

/** Aggregate, clean up, and report. */
export async function finish(spec: RunSpec, st: RunState): Promise<RunResult> {
  const outputs = st.outputs!;
  let metricsPath: string | null = null;
  let keyMetrics: RunResult['keyMetrics'] = [];
  let aggregationError: string | null = null;
  if (spec.disableAggregation) {
    st.messages.push(disableAggregationNotice());
  } else {
    st.phase = 'aggregate';
    st.messages.push(computingAggregateMetrics());
    try {
      const agg = await aggregation.aggregateRun.executeWithOptions(
        {
          summary: 'aggregate: POST /aggregate_metrics per agent',
          ...(spec.aggregateRetry ? { retry: aggregationRetry(spec.aggregateRetry) } : {}),
        },
        [
          {
            output: outputs.output,
            metrics: outputs.metrics,
            routing: spec.routing,
            timeoutMs: Math.max(spec.requestTimeoutMs, 3_600_000),
          },
        ],
      );
      metricsPath = agg.metricsPath;
      keyMetrics = agg.keyMetrics;
    } catch (err) {
      // Every row is committed by now: a failed aggregation ends the run with its outputs complete,
      // and the result says why (the CLI exits 3). Runs recorded before this failed instead.
      if (CancellationScope.current().consideredCancelled || !patched('aggregation-failure-ends-run')) throw err;
      aggregationError = aggregationFailure(err);
    }
  }
  await quick.removeWorkDir(outputs.workDir);
  st.phase = 'done';
  return {
    outputs,
    metricsPath,
    planned: st.planned,
    rounds: st.round + 1,
    seeded: st.seeded,
    done: st.totals.main,
    failed: st.totals.failed,
    dropped: st.totals.dropped,
    rejected: st.totals.rejected,
    judgeFailed: st.totals.judgeFailed,
    perAgent: st.totals.perAgent,
    keys: st.keysPlanned ?? st.planned,
    scored: st.mainRows,
    missing: keysMissing(st),
    sidecarOpenedAt: st.sidecarOpenedAt,
    keyMetrics,
    aggregationError,
    messages: st.messages,
    forceWarning: st.forceWarning,
  };
}

/** One line: why the aggregate phase failed, and whether it gave up retrying. */
function aggregationFailure(err: unknown): string {
  const message = innermostMessage(err);
  const gaveUp = err instanceof ActivityFailure && err.retryState === 'MAXIMUM_ATTEMPTS_REACHED';
  return gaveUp ? `${message}; gave up after ${AGGREGATION_MAX_ATTEMPTS} attempts` : message;
}
