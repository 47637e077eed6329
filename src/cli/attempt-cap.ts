/**
 * The attempt cap of a run about to start: read back the cap saved with the run (its coverage
 * file) when it resumes, add `--extend-attempts`, and record both in the spec (the workflow's
 * input, so the history holds them; the coverage file saves them again when the outputs open).
 * A resume also keeps the policies saved with the run unless a flag changes them (saved-policy.ts):
 * a run saved with `--retry-terminal-timeouts` goes on retrying terminal timeouts without the flag
 * (`--no-retry-terminal-timeouts` turns it off), and likewise `--dispatch-longest-first`.
 */
import { resolveAttemptCap, type CapSource } from '../contract/attempts.js';
import { reconciliationGap, unreconciledNotice } from '../contract/coverage-reconcile.js';
import { coveragePath } from '../contract/file-names.js';
import { MAX_ATTEMPTS_ENV } from '../contract/keys.js';
import type { RunSpec } from '../contract/run-spec.js';
import type { RunOptions } from '../config/run-options.js';
import { readCoverageFile } from '../io/coverage-file.js';
import { outputPathsFor } from '../contract/output-paths.js';
import { policiesInForce, refuseTwoOrders } from './saved-policy.js';

/** The spec with the cap in force (`maxAttempts`) and as saved (`attemptCap`), and the lines to print. */
export async function withAttemptCap(
  spec: RunSpec,
  opts: RunOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ spec: RunSpec; notices: string[] }> {
  const from: CapSource = opts.maxAttempts !== undefined ? '--max-attempts' : env[MAX_ATTEMPTS_ENV] ? MAX_ATTEMPTS_ENV : 'the default';
  // The guard's prefix when it is known (else the plain name: --force with --no-worker).
  const file = coveragePath(outputPathsFor(spec.outputPath, spec.guarded?.prefix ?? '').output);
  const saved = spec.resume ? await readCoverageFile(file) : null;
  const { cap, notices } = resolveAttemptCap({ value: spec.maxAttempts, from }, saved, {
    resume: spec.resume,
    extend: opts.extendAttempts,
    coverageFile: file,
  });
  const gap = saved && reconciliationGap(saved);
  if (gap) notices.push(unreconciledNotice(file, gap));
  const policies = policiesInForce(opts, saved, file);
  refuseTwoOrders(policies.inForce, spec.order);
  notices.push(...policies.notices);
  const { retryTerminalTimeouts, dispatchLongestFirst } = policies.inForce;
  return {
    spec: {
      ...spec,
      attemptCap: cap,
      maxAttempts: cap.max_rollout_attempts + cap.attempt_extension,
      retryTerminalTimeouts,
      ...(dispatchLongestFirst ? { dispatchLongestFirst } : {}),
      // The exported config says the policy in force, not only the flag.
      ...(spec.upload
        ? { upload: { ...spec.upload, options: { ...spec.upload.options, retry_terminal_timeouts: retryTerminalTimeouts } } }
        : {}),
    },
    notices,
  };
}
