/**
 * What the round's window sends its activities: the `verifyBatch` request of one batch (rows by
 * plan range, never rows themselves) and the options of it and of a `lendLanes` loan.
 */
import type { ActivityOptions } from '@temporalio/workflow';
import type { ReverifyActivities } from '../activities/index.js';
import type { PlanSummary, RunSpec } from '../src/contract/run-spec.js';
import type { RunState } from './run-state.js';

type BatchRequest = Parameters<ReverifyActivities['verifyBatch']>[0];

/** Replies of a run that, if all are 4xx rejections, stop it (the server or config is wrong). */
const REJECT_GUARD_REPLIES = 20;

/** One batch of a segment (segments.ts): rows `from`..`to - 1` of its plan on `slots` lanes. */
export interface BatchLaunch {
  /** Its number across the segments (its files' names), and its place in its segment, of `of`. */
  batch: number;
  index: number;
  of: number;
  round: number;
  plan: PlanSummary;
  from: number;
  to: number;
  slots: number;
  /** `/verify` requests it may make (absent: no budget). */
  allowance?: number;
  /** Held before (it spent its allowance): launched again. */
  held: boolean;
  /** Operation id prefix of a re-judgment round (src/contract/rejudgment.ts). */
  operation?: string;
}

const roundPrefix = (round: number) => (round > 0 ? `re-judge round ${round + 1}: ` : '');

export function batchOptions(spec: RunSpec, b: BatchLaunch): ActivityOptions {
  return {
    summary: `${roundPrefix(b.round)}verify rows ${b.from}..${b.to - 1} (batch ${b.index + 1}/${b.of}${b.held ? ', launched again from where it was held' : ''})`,
    heartbeatTimeout: spec.heartbeatTimeoutMs,
    // Through the task queue, never eagerly to the worker running the workflow: batches
    // spread over every `reverify worker` that polls the queue.
    allowEagerDispatch: false,
  };
}

export function batchRequest(spec: RunSpec, st: RunState, b: BatchLaunch): BatchRequest {
  const plan = b.plan;
  const replies = st.totals.main + st.totals.failed + st.totals.dropped;
  const rejectGuard = st.totals.rejected === replies && replies < REJECT_GUARD_REPLIES ? REJECT_GUARD_REPLIES - replies : 0;
  return {
    inputsPath: spec.inputsPath,
    plan: {
      planPath: plan.planPath,
      sourcePath: plan.sourcePath,
      agents: plan.agents,
      servers: plan.servers,
      recordBytes: plan.recordBytes,
      files: plan.files,
      ...(plan.inputFormat ? { inputFormat: plan.inputFormat } : {}),
    },
    serverUrls: spec.routing.servers,
    workDir: st.outputs!.workDir,
    round: b.round,
    batch: b.batch,
    from: b.from,
    to: b.to,
    parallelism: b.slots,
    launchLimit: st.effective,
    requestTimeoutMs: spec.requestTimeoutMs,
    rejectGuard,
    ...(b.allowance === undefined ? {} : { allowance: b.allowance }),
    outputSidecar: st.outputs!.sidecar,
    ...(b.operation === undefined ? {} : { operation: b.operation }),
    retry: { retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses, retryTerminalTimeouts: spec.retryTerminalTimeouts },
    ...(st.estimate ? { paired: true } : {}),
  };
}

/** A loan of `lanes` lanes to the round's last batches (activities/lend-lanes.ts). */
export function loanOptions(spec: RunSpec, st: RunState, lanes: number): ActivityOptions {
  return {
    summary: `${roundPrefix(st.round)}lend ${lanes} /verify lane(s) to the last batches`,
    heartbeatTimeout: spec.heartbeatTimeoutMs,
    allowEagerDispatch: false,
  };
}
