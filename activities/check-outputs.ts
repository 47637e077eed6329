import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError } from '../src/contract/errors.js';
import { sidecarPath } from '../src/contract/file-names.js';
import { outputExists } from '../src/contract/messages.js';
import type { OutputPaths } from '../src/contract/run-spec.js';
import { exists } from '../src/io/file-exists.js';
import { outputPathsFor, type OutputRules } from './output-paths.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/** The files a run reads; --overwrite must never delete one of them. */
export interface InputFiles {
  inputsPath: string;
  rolloutsPath: string;
  /** Recovery mode: the sidecar of --rollouts is read too. */
  judgeFailedOnly: boolean;
}

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * NeMo Gym's `--overwrite` deletes the output before reading the inputs, so `--output` equal to
 * `--rollouts` destroys the input (spec §7). Here that is refused before anything is touched.
 */
async function refuseToDeleteInputs(paths: OutputPaths, inputs: InputFiles): Promise<void> {
  for (const target of [paths.output, paths.sidecar]) {
    for (const [flag, input] of [
      ['--inputs', inputs.inputsPath],
      ['--rollouts', inputs.rolloutsPath],
      ...(inputs.judgeFailedOnly ? ([['the recovery source', sidecarPath(inputs.rolloutsPath)]] as const) : []),
    ] as const) {
      if (await sameFile(target, input)) {
        throw new ConfigError(
          `--overwrite would delete '${target}', which is ${flag} of this run: choose another --output ` +
            '(to write into the run\'s own rollouts file, use --judge-failed-only --append)',
        );
      }
    }
  }
}

/**
 * Prepare phase, first half (spec §4.4): create the output's parent directories, check that they are
 * writable, and refuse existing outputs unless --overwrite/--resume/--append. Deletes nothing: with
 * --overwrite the old files are deleted only after the plan has validated every input row, so bad
 * input never costs the previous results.
 */
export function checkOutputs() {
  return (outputPath: string, prefix: string, rules: OutputRules, inputs: InputFiles): Promise<OutputPaths> =>
    failFastOnUserError(() => whileHeartbeating(async () => {
      const paths = outputPathsFor(outputPath, prefix);
      if (rules.overwrite && !rules.resume && !rules.append) await refuseToDeleteInputs(paths, inputs);
      const dir = dirname(paths.output);
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
      if ((await exists(paths.output)) && (await stat(paths.output)).isDirectory()) {
        throw new ConfigError(`--output '${paths.output}' is a directory: pass a file path such as '${join(paths.output, 'reverified.jsonl')}'`);
      }
      if (!rules.overwrite && !rules.resume && !rules.append) {
        for (const p of [paths.output, paths.sidecar]) {
          if (await exists(p)) throw new ConfigError(outputExists(p));
        }
      }
      return paths;
    }));
}
