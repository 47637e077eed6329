import { constants } from 'node:fs';
import { access, mkdir, open, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../src/contract/errors.js';
import { aggregateMetricsPath, prefixedOutputPath, sidecarPath } from '../src/contract/file-names.js';
import { deletedExistingOutput, outputExists } from '../src/contract/messages.js';
import type { OutputPaths } from '../src/contract/run-spec.js';
import { failFastOnUserError } from './user-errors.js';

export interface OutputRules {
  overwrite: boolean;
  resume: boolean;
  append: boolean;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The output paths of a run, with the guard's prefix applied to the basename (spec §1.1, §4.4). */
export function outputPathsFor(outputPath: string, prefix: string): OutputPaths {
  const output = prefixedOutputPath(outputPath, prefix);
  return {
    output,
    sidecar: sidecarPath(output),
    metrics: aggregateMetricsPath(output),
    workDir: join(dirname(output), `.${basename(output)}.reverify`),
  };
}

/**
 * Prepare phase, first half (spec §4.4): create the output's parent directories, check that they are
 * writable, and refuse existing outputs unless --overwrite/--resume/--append. Deletes nothing: with
 * --overwrite the old files are deleted only after the plan has validated every input row, so bad
 * input never costs the previous results.
 */
export function checkOutputs() {
  return (outputPath: string, prefix: string, rules: OutputRules): Promise<OutputPaths> =>
    failFastOnUserError(async () => {
      const paths = outputPathsFor(outputPath, prefix);
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
    });
}

/**
 * Prepare phase, second half: with --overwrite (and neither --resume nor --append) delete the old
 * output and sidecar, then create both (spec §1.6: both always exist after a run) and the work
 * directory. Returns the current lengths, from which the workflow starts recording commits.
 */
export function openOutputs() {
  return (paths: OutputPaths, rules: OutputRules): Promise<{ mainLength: number; sidecarLength: number; messages: string[] }> =>
    failFastOnUserError(async () => {
      const messages: string[] = [];
      if (rules.overwrite && !rules.resume && !rules.append) {
        for (const p of [paths.output, paths.sidecar]) {
          if (await exists(p)) {
            await rm(p);
            messages.push(deletedExistingOutput(p));
          }
        }
      }
      const lengths: number[] = [];
      for (const p of [paths.output, paths.sidecar]) {
        const fh = await open(p, 'a');
        lengths.push((await fh.stat()).size);
        await fh.close();
      }
      await mkdir(paths.workDir, { recursive: true });
      return { mainLength: lengths[0], sidecarLength: lengths[1], messages };
    });
}

/** Removes the run's work directory once its results are committed. */
export function removeWorkDir() {
  return async (workDir: string): Promise<void> => {
    await rm(workDir, { recursive: true, force: true });
  };
}
