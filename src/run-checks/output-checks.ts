/**
 * The prepare phase's checks (spec §4.4), in one place: run by `reverify run` before it starts a
 * workflow (src/cli/precheck.ts) and again by the `checkOutputs` activity inside the workflow (for
 * an attach, and for workers that see another file system).
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { outputExists } from '../contract/messages.js';
import { refuseOverlongNames } from '../contract/name-limits.js';
import { outputPathsFor } from '../contract/output-paths.js';
import type { InputFiles, OutputRules } from '../contract/output-rules.js';
import type { OutputPaths } from '../contract/run-spec.js';
import { exists } from '../io/file-exists.js';
import { checkRunLockFree } from '../io/run-lock.js';
import { dataFiles, refuseInputAliases, type ReadFile } from './input-aliases.js';
import { refuseManagedRuns } from './managed-runs.js';
import { refuseMultiStageRecovery } from './multi-stage.js';

/**
 * In recovery, refuse multi-stage rows (NeMo Gym 0.7.0, `multi-stage.ts`); refuse an output whose
 * derived names exceed the file system's limits (src/contract/name-limits.ts); create the output's
 * parent directories, check that they are writable, refuse existing outputs unless
 * --overwrite/--resume/--append (NeMo Gym's rule and message first, so `--output` equal to
 * `--rollouts` on a fresh run says "already exists" as NeMo Gym does; a written path that is
 * `--inputs` or another file read is refused before it), then refuse any written path that is also an input (input-aliases.ts). Before all that, refuse NeMo Gym managed runs
 * (managed-runs.ts), and a run lock another process holds (src/io/run-lock.ts; only checked here:
 * the steps that write take it). Deletes nothing: with --overwrite the old files are deleted only
 * after the plan has validated every input row, so bad input never costs the previous results.
 */
export async function checkOutputPaths(outputPath: string, prefix: string, rules: OutputRules, inputs: InputFiles): Promise<OutputPaths> {
  // NeMo Gym 0.7.0 refuses multi-stage recovery sources before it prepares the outputs.
  if (inputs.judgeFailedOnly)
    await refuseMultiStageRecovery(inputs.rolloutsPath, { retryInvalidJudgeResponses: inputs.retryInvalidJudgeResponses });
  // Before anything, even a directory, is made: a derived name over the file system's limits.
  refuseOverlongNames(outputPath, prefix);
  const paths = outputPathsFor(outputPath, prefix);
  // A run of newer NeMo Gym's run store is refused before anything, even a directory, is made.
  await refuseManagedRuns(paths.output, inputs.atifManifestPath ? undefined : inputs.rolloutsPath, rules.overwrite);
  await makeOutputDir(paths.output);
  // Another process (a NeMo Gym collector) writing this run: NeMo Gym takes the lock first, so it is checked first.
  await checkRunLockFree(paths.output);
  if (inputs.judgeFailedOnly && inputs.retryInvalidJudgeResponses) await checkRunLockFree(inputs.rolloutsPath);
  // An output that is the inputs (or another file read but --rollouts) is refused at once: the
  // "already exists" line would suggest --overwrite, which this check then refuses.
  const reads = dataFiles(inputs);
  await refuseInputAliases([paths], reads.filter(notRollouts), rules);
  if (!rules.overwrite && !rules.resume && !rules.append) {
    for (const p of [paths.output, paths.sidecar]) {
      if (await exists(p)) throw new ConfigError(outputExists(p));
    }
  }
  // mkdir created nothing if this throws: an input can only alias a path in an existing directory.
  await refuseInputAliases(
    [paths],
    reads.filter((r) => !notRollouts(r)),
    rules,
  );
  return paths;
}

/** Every file read but --rollouts and its sidecar (for which NeMo Gym's "already exists" comes first). */
function notRollouts(r: ReadFile): boolean {
  return r.role !== 'rollouts' && r.role !== 'recovery';
}

/** Creates the output's directory and checks it is writable, and that the output is not a directory. */
async function makeOutputDir(output: string): Promise<void> {
  const dir = dirname(output);
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const inTheWay = code === 'EEXIST' || code === 'ENOTDIR';
    throw new ConfigError(
      `cannot write the output directory '${dir}' (${inTheWay ? 'a file is in the way' : code}): ` +
        `choose another --output${inTheWay ? '' : ' or fix its permissions'}`,
    );
  }
  if ((await exists(output)) && (await stat(output)).isDirectory()) {
    throw new ConfigError(`--output '${output}' is a directory: pass a file path such as '${join(output, 'reverified.jsonl')}'`);
  }
}
