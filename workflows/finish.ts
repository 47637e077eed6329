/** The run's end: upload the rows, aggregate (a failure retrying cannot fix ends the run with the rows complete), upload the metrics and to W&B, write the coverage file, clean up, report. */
import { CancellationScope } from '@temporalio/workflow';
import { aggregateTimeoutMs } from '../src/contract/aggregate-timeout.js';
import { computingAggregateMetrics, disableAggregationNotice } from '../src/contract/messages.js';
import type { RunResult, RunSpec } from '../src/contract/run-spec.js';
import { aggregation, aggregationRetry, quick } from './activity-proxies.js';
import { innermostMessage } from './failures.js';
import { keysMissing, rolloutsPerAgent, type RunState } from './run-state.js';
import { enterPhase } from './details.js';
import { uploadMetrics, uploadRows, uploadWandb } from './upload.js';
import { coverageAtEnd } from './coverage.js';
import { runEstimateView } from '../src/stats/run-estimate.js';

/** Upload the rows, aggregate, upload the metrics and to W&B, write the coverage file, clean up, and report. */
export async function finish(spec: RunSpec, st: RunState): Promise<RunResult> {
  const outputs = st.outputs!;
  const uploading = await uploadRows(spec, st);
  let metricsPath: string | null = null;
  let keyMetrics: RunResult['keyMetrics'] = [];
  let aggregationError: string | null = null;
  if (spec.disableAggregation) {
    st.messages.push(disableAggregationNotice());
  } else {
    enterPhase(st, 'aggregate');
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
            timeoutMs: spec.aggregateTimeoutMs ?? aggregateTimeoutMs(spec.requestTimeoutMs, st.mainRows ?? st.totals.main),
            ...(spec.aggregateRetry ? { serverErrorDelayMs: spec.aggregateRetry.initialIntervalMs } : {}),
          },
        ],
      );
      metricsPath = agg.metricsPath;
      keyMetrics = agg.keyMetrics;
    } catch (err) {
      // Every row is committed by now: an aggregation that cannot succeed ends the run with its
      // outputs complete, and the result says why (the CLI prints it and the command that computes
      // the metrics later, exit 2).
      if (CancellationScope.current().consideredCancelled) throw err;
      aggregationError = innermostMessage(err);
    }
  }
  const counts = { scored: st.mainRows ?? 0, missing: keysMissing(st) };
  const upload = await uploadMetrics(uploading, st, counts);
  const wandb = await uploadWandb(spec, st, counts, metricsPath);
  const coverage = await coverageAtEnd(spec, st);
  await quick.removeWorkDir.executeWithOptions({ summary: 'done: remove the work directory' }, [outputs.workDir]);
  enterPhase(st, 'done');
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
    rollouts: rolloutsPerAgent(st),
    missingAfterCap: st.roundJudgeFailed,
    sidecarOpenedAt: st.sidecarOpenedAt,
    mainAtRejudge: st.mainAtRejudge,
    keyMetrics,
    aggregationError,
    ...(upload === undefined ? {} : { upload }),
    ...(wandb === undefined ? {} : { wandb }),
    messages: st.messages,
    forceWarning: st.forceWarning,
    ...(coverage ? { coverage } : {}),
    ...(st.estimate ? { estimate: runEstimateView(st.estimate) } : {}),
    ...(st.stoppedEarly ? { stoppedEarly: st.stoppedEarly } : {}),
    ...(st.noise ? { noise: st.noise } : {}),
  };
}
