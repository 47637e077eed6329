/**
 * What the output checks (src/run-checks/output-checks.ts) need of a run: its output rules and the
 * files it reads, made from its spec here, for `reverify run`'s checks and the prepare activity's.
 * Types and pure functions (no Node API): the workflow can build them the same way.
 */
import type { RunSpec } from './run-spec.js';

/** How a run may treat an existing output. */
export interface OutputRules {
  overwrite: boolean;
  resume: boolean;
  append: boolean;
  /** Cut a cut-off last line of a reused output (`--repair-truncated`). */
  repairTruncated?: boolean;
}

/** The files a run reads. */
export interface InputFiles {
  inputsPath: string;
  rolloutsPath: string;
  /** Recovery mode: the sidecar of --rollouts is read too. */
  judgeFailedOnly: boolean;
  /** With recovery: the invalid-judge rows of --rollouts are moved to its sidecar and recovered too. */
  retryInvalidJudgeResponses?: boolean;
  /** ATIF mode: the manifest is read instead of rollouts (and the trajectories it names, checked by the plan). */
  atifManifestPath?: string;
}

/** The output rules of a run's spec. */
export function outputRulesOf(spec: RunSpec): OutputRules {
  return { overwrite: spec.overwrite, resume: spec.resume, append: spec.append, repairTruncated: spec.repairTruncated };
}

/** The files a run's spec says it reads. */
export function inputFilesOf(spec: RunSpec): InputFiles {
  return {
    inputsPath: spec.inputsPath,
    rolloutsPath: spec.rolloutsPath,
    judgeFailedOnly: spec.judgeFailedOnly,
    retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses,
    ...(spec.atif ? { atifManifestPath: spec.atif.manifestPath } : {}),
  };
}
