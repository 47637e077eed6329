/**
 * The first round's plan request, built from the run's spec and output paths: by the workflow for
 * its plan activity, and by `reverify run` for the plan it makes ahead (activities/plan-ahead.ts),
 * which the activity takes over only when the two requests are the same.
 */
import type { ReverifyActivities } from '../activities/index.js';
import type { OutputPaths, RunSpec } from '../src/contract/run-spec.js';

type PlanRequest = Parameters<ReverifyActivities['planRun']>[0];

/**
 * The plan's order from the run's options (absent: the file's): `--order random` and its seed, or
 * `--dispatch-longest-first` (in force: the flag or as saved; the CLI refuses both at once).
 */
function planOrderOf(spec: RunSpec): Pick<PlanRequest, 'order'> {
  if (spec.order === 'random') return { order: { kind: 'random', seed: spec.orderSeed ?? 0 } };
  if (spec.dispatchLongestFirst === true) return { order: { kind: 'longest' } };
  return {};
}

export function planRequestFor(spec: RunSpec, outputs: OutputPaths): PlanRequest {
  return {
    inputsPath: spec.inputsPath,
    rolloutsPath: spec.rolloutsPath,
    workDir: outputs.workDir,
    routing: spec.routing,
    limit: spec.limit,
    ...planOrderOf(spec),
    judgeFailedOnly: spec.judgeFailedOnly,
    resume: spec.resume,
    outputs,
    outputsCleared: spec.overwrite && !spec.resume && !spec.append,
    maxAttempts: spec.maxAttempts,
    repairTruncated: spec.repairTruncated,
    retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses,
    retryTerminalTimeouts: spec.retryTerminalTimeouts,
    ...(spec.allowUnsafe === true ? { allowUnsafe: true } : {}),
  };
}
