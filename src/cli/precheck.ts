import type { RunSpec } from '../contract/run-spec.js';
import { VerifierClient } from '../verifier/client.js';
import { inputFilesOf, outputRulesOf } from '../contract/output-rules.js';
import { checkOutputPaths } from '../run-checks/output-checks.js';
import { guardDecision } from '../run-checks/guard-decision.js';

/**
 * What `reverify run` checks before it starts a workflow, so that a user error prints its one line
 * and leaves nothing in the Temporal server (files, flags, config and routing are checked by
 * buildRunSpec): the resources servers' `GET /reverify_mode` (reachable, and supported unless
 * --force), then the output rules (exists without --overwrite/--resume/--append, a directory, not
 * writable, an input aliased, multi-stage recovery rows). These are the bodies of the guard and
 * prepare activities, which run them again inside the workflow (for an attach, and for workers
 * that see another file system). With --no-worker the servers are checked by the workers only
 * (they may reach URLs this machine cannot). Skipped when attaching to a live run: its outputs
 * exist because it writes them. Returns the spec with the guard's decision, which the workflow
 * records instead of asking the servers again (one GET /reverify_mode per server, spec §6.98).
 */
export async function precheckRun(spec: RunSpec, opts: { worker: boolean }): Promise<RunSpec> {
  // ATIF mode keeps NeMo Gym 0.7.0's order inside the workflow (plan, stateless preflight, then the
  // output rules), and writes nothing before them either: its refusals come in that order.
  if (spec.atif) return spec;
  let guarded: RunSpec['guarded'];
  if (!spec.judgeFailedOnly && opts.worker) {
    const client = new VerifierClient({ requestTimeoutMs: 30_000, connectionsPerServer: 1 });
    try {
      guarded = await guardDecision(client, spec.guardServers, spec.force);
    } finally {
      await client.close();
    }
  }
  // --force without the guard's answer (--no-worker): the prefix, hence the paths, are not known yet.
  if (!guarded && spec.force && !spec.judgeFailedOnly) return spec;
  await checkOutputPaths(spec.outputPath, guarded?.prefix ?? '', outputRulesOf(spec), inputFilesOf(spec));
  return guarded ? { ...spec, guarded } : spec;
}
