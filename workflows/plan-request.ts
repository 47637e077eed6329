/**
 * The first round's plan request, built from the run's spec and output paths: by the workflow for
 * its plan activity, and by `reverify run` for the plan it makes ahead (activities/plan-ahead.ts),
 * which the activity takes over only when the two requests are the same.
 */
import type { ReverifyActivities } from '../activities/index.js';
import type { OutputPaths, RunSpec } from '../src/contract/run-spec.js';

type PlanRequest = Parameters<ReverifyActivities['planRun']>[0];

export function planRequestFor(spec: RunSpec, outputs: OutputPaths): PlanRequest {
  return {
    inputsPath: spec.inputsPath,
    rolloutsPath: spec.rolloutsPath,
    workDir: outputs.workDir,
    routing: spec.routing,
    limit: spec.limit,
    ...(spec.order === 'random' ? { order: { kind: 'random', seed: spec.orderSeed ?? 0 } } : {}),
    judgeFailedOnly: spec.judgeFailedOnly,
    resume: spec.resume,
    outputs,
    outputsCleared: spec.overwrite && !spec.resume && !spec.append,
    maxAttempts: spec.maxAttempts,
    repairTruncated: spec.repairTruncated,
    retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses,
    retryTerminalTimeouts: spec.retryTerminalTimeouts,
  };
}
