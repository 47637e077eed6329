import type { RunSpec } from '../contract/run-spec.js';
import { VerifierClient } from '../verifier/client.js';
import { checkOutputPaths } from '../../activities/check-outputs.js';
import { guardDecision } from '../../activities/guard-reverify-modes.js';

/**
 * What `reverify run` checks before it starts a workflow, so that a user error prints its one line
 * and leaves nothing in the Temporal server (files, flags, config and routing are checked by
 * buildRunSpec): the resources servers' `GET /reverify_mode` (reachable, and supported unless
 * --force), then the output rules (exists without --overwrite/--resume/--append, a directory, not
 * writable, an input aliased, multi-stage recovery rows). These are the bodies of the guard and
 * prepare activities, which run them again inside the workflow (for an attach, and for workers
 * that see another file system). With --no-worker the servers are checked by the workers only
 * (they may reach URLs this machine cannot). Skipped when attaching to a live run: its outputs
 * exist because it writes them.
 */
export async function precheckRun(spec: RunSpec, opts: { worker: boolean }): Promise<void> {
  let prefix = '';
  if (!spec.judgeFailedOnly && opts.worker) {
    const client = new VerifierClient({ requestTimeoutMs: 30_000, connectionsPerServer: 1 });
    try {
      prefix = (await guardDecision(client, spec.guardServers, spec.force)).prefix;
    } finally {
      await client.close();
    }
  }
  const rules = { overwrite: spec.overwrite, resume: spec.resume, append: spec.append, repairTruncated: spec.repairTruncated };
  await checkOutputPaths(spec.outputPath, prefix, rules, {
    inputsPath: spec.inputsPath,
    rolloutsPath: spec.rolloutsPath,
    judgeFailedOnly: spec.judgeFailedOnly,
    retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses,
  });
}
