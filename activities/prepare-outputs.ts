import { constants } from 'node:fs';
import { access, mkdir, open, rm, stat, type FileHandle } from 'node:fs/promises';
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
  /** Cut a cut-off last line of a reused output (`--repair-truncated`). */
  repairTruncated?: boolean;
}

/**
 * Makes a reused output end with a whole line before anything is appended: a last line that is
 * complete JSON but lacks its `\n` gets one; a cut-off one is cut when the user asked for it (the
 * plan phase has already stopped the run otherwise). Returns a message when something was changed.
 */
async function endWithWholeLine(path: string, repair: boolean): Promise<string | null> {
  const fh = await open(path, 'r+');
  try {
    const { size } = await fh.stat();
    if (size === 0) return null;
    const tailLen = Math.min(size, 1 << 20);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    if (tail[tailLen - 1] === 10) return null;
    const nl = tail.lastIndexOf(10);
    let start = nl >= 0 ? size - tailLen + nl + 1 : 0;
    if (nl < 0 && size > tailLen) {
      // The last line is longer than the tail window: find its start by scanning back.
      start = await lastLineStart(fh, size);
    }
    const last = Buffer.alloc(size - start);
    await fh.read(last, 0, last.length, start);
    try {
      JSON.parse(last.toString('utf8'));
      await fh.write(Buffer.from('\n'), 0, 1, size);
      await fh.sync();
      return null;
    } catch {
      if (!repair) throw new ConfigError(`${path}: the last line is cut off; delete it, or pass --repair-truncated to cut it`);
      await fh.truncate(start);
      await fh.sync();
      return `Cut the partial last line of ${path} (${size - start} bytes; --repair-truncated)`;
    }
  } finally {
    await fh.close();
  }
}

async function lastLineStart(fh: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(1 << 20);
  for (let end = size; end > 0; ) {
    const from = Math.max(0, end - chunk.length);
    await fh.read(chunk, 0, end - from, from);
    const nl = chunk.subarray(0, end - from).lastIndexOf(10);
    if (nl >= 0) return from + nl + 1;
    end = from;
  }
  return 0;
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
    failFastOnUserError(async () => {
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
        if (await exists(p)) {
          const repaired = await endWithWholeLine(p, rules.repairTruncated ?? false);
          if (repaired) messages.push(repaired);
        }
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
