import { ConfigError } from '../contract/errors.js';
import { sidecarPath } from '../contract/file-names.js';
import { multiStageRecovery } from '../contract/messages.js';
import { refusesRecovery, type RecoverySource } from '../contract/multi-stage.js';
import { exists } from '../io/file-exists.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';

/** What else recovery reads, as NeMo Gym 0.7.0's options say. */
export interface RecoveryOptions {
  /**
   * 0.7.0's `retry_invalid_judge_responses`: recovery first moves the invalid-judge rows of
   * --rollouts into its sidecar, so those rows of --rollouts are recovery rows too
   * (`--retry-invalid-judge-responses`).
   */
  retryInvalidJudgeResponses?: boolean;
}

/** The files `--judge-failed-only` recovers rows from: the sidecar of --rollouts, and with the option its invalid-judge rows. */
export function recoverySources(rolloutsPath: string, opts: RecoveryOptions = {}): RecoverySource[] {
  return [
    { path: sidecarPath(rolloutsPath), invalidJudgeRowsOnly: false },
    ...(opts.retryInvalidJudgeResponses ? [{ path: rolloutsPath, invalidJudgeRowsOnly: true }] : []),
  ];
}

/**
 * NeMo Gym 0.7.0: `--judge-failed-only` refuses multi-stage rows (`stage_index`) anywhere in its
 * recovery sources, before anything is written (the prepare phase calls it first). A source that
 * does not exist is skipped (the plan reports a missing sidecar). A `ConfigError` names the first
 * such row by `file:line`.
 */
export async function refuseMultiStageRecovery(rolloutsPath: string, opts: RecoveryOptions = {}): Promise<void> {
  for (const source of recoverySources(rolloutsPath, opts)) {
    if (!(await exists(source.path))) continue;
    for await (const line of jsonlLines(source.path)) {
      if (isBlank(line.text) || !line.utf8) continue;
      if (refusesRecovery(line.text, source.invalidJudgeRowsOnly)) throw new ConfigError(multiStageRecovery(source.path, line.lineNo));
    }
  }
}
