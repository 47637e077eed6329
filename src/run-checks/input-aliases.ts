/**
 * No file a command writes or deletes may be one of the files it reads, under any name (symlinks,
 * hard links, `..` segments): NeMo Gym's `--overwrite` deletes `--output` before reading the inputs,
 * and any run would overwrite an input named like its metrics file or its report (spec §7). The one
 * check for every command that writes (`run`, `report`, `aggregate`). The one exception is NeMo
 * Gym's own: `--judge-failed-only --append` writing into the run's rollouts file (and so into its
 * sidecar, the recovery source). Nor may a file it writes be a directory: one line, not `EISDIR`.
 */
import { ConfigError } from '../contract/errors.js';
import { derivedFiles, sidecarPath, type DerivedFile } from '../contract/file-names.js';
import type { OutputPaths } from '../contract/run-spec.js';
import { isInside, pathIdentity, sameFile, type PathIdentity } from '../io/same-file.js';
import type { InputFiles, OutputRules } from '../contract/output-rules.js';

/** A file the run reads, and how the user named it. */
export interface ReadFile {
  /** `runFile`: a file of the run a report reads; `shard`: a shard `reverify aggregate` merges. */
  role: 'inputs' | 'rollouts' | 'recovery' | 'config' | 'manifest' | 'trajectory' | 'runFile' | 'shard';
  /** The flag, as the message shows it. */
  flag: string;
  path: string;
}

/** The derived files an input may not be (the run lock's bytes are never written). */
const WRITTEN_ROLES: ReadonlySet<DerivedFile['role']> = new Set([
  'output',
  'sidecar',
  'metrics',
  'coverage',
  'unstarted',
  'noise',
  'history',
  'report',
  'workDir',
]);

/** A file a command writes or deletes; `fix` says what to choose instead (default: another --output). */
export interface WrittenFile {
  role: DerivedFile['role'] | 'merged';
  /** What it is, with whose: `the output of this run`. */
  what: string;
  path: string;
  fix?: string;
}

/** The data files a run reads, by flag. */
export function dataFiles(inputs: InputFiles): ReadFile[] {
  if (inputs.atifManifestPath !== undefined) {
    return [
      { role: 'inputs', flag: '--inputs', path: inputs.inputsPath },
      { role: 'manifest', flag: '--atif-manifest', path: inputs.atifManifestPath },
    ];
  }
  return [
    { role: 'inputs', flag: '--inputs', path: inputs.inputsPath },
    { role: 'rollouts', flag: '--rollouts', path: inputs.rolloutsPath },
    ...(inputs.judgeFailedOnly
      ? [{ role: 'recovery' as const, flag: 'the sidecar of --rollouts', path: sidecarPath(inputs.rolloutsPath) }]
      : []),
  ];
}

/** Every path a run with these output paths writes or deletes (the coverage file is reserved for it). */
function writtenFiles(paths: OutputPaths): WrittenFile[] {
  return derivedFiles(paths.output)
    .filter((f) => WRITTEN_ROLES.has(f.role))
    .map((f) => ({ role: f.role, what: `${f.what} of this run`, path: f.path }));
}

/** NeMo Gym's supported way to write into the run's own rollouts file (contract §7). */
function allowed(w: WrittenFile, r: ReadFile, rules: OutputRules): boolean {
  return rules.append && ((w.role === 'output' && r.role === 'rollouts') || (w.role === 'sidecar' && r.role === 'recovery'));
}

function aliasMessage(w: WrittenFile, r: ReadFile, rules: OutputRules): string {
  const where = r.path === w.path ? '' : ` ('${w.path}')`;
  const fix = w.fix ?? 'choose another --output';
  if (w.role === 'workDir') {
    return `${r.flag} '${r.path}' is inside ${w.what}${where}, which it deletes when it ends: ${fix}, or move the file`;
  }
  const clears = rules.overwrite && !rules.resume && !rules.append;
  const appends = rules.resume || rules.append;
  const verb =
    w.role === 'output' || w.role === 'sidecar' ? (clears ? 'delete (--overwrite)' : appends ? 'append to' : 'write') : 'overwrite';
  const hint =
    w.role === 'output' && r.role === 'rollouts' ? " (to write into the run's own rollouts file, use --judge-failed-only --append)" : '';
  return `${r.flag} '${r.path}' is also ${w.what}${where}, which it would ${verb}: ${fix}${hint}`;
}

/**
 * A check for many files read one by one (an ATIF manifest's trajectories): the written paths'
 * identities are taken once; the returned function throws like `refuseInputAliases` for one file.
 */
export async function aliasChecker(paths: OutputPaths, rules: OutputRules): Promise<(r: ReadFile, id: PathIdentity) => void> {
  const written = await Promise.all(writtenFiles(paths).map(async (w) => ({ w, id: await pathIdentity(w.path) })));
  return (r, id) => {
    for (const { w, id: wId } of written) {
      const alias = sameFile(wId, id) || (w.role === 'workDir' && isInside(id, wId));
      if (alias && !allowed(w, r, rules)) throw new ConfigError(aliasMessage(w, r, rules));
    }
  };
}

/**
 * Throws a one-line `ConfigError` when a file of `reads` is one the run writes or deletes with any
 * of `outputs` (several when the guard has not chosen the `unsafe_` prefix yet). Reads nothing but
 * file metadata; call it before anything is written.
 */
export async function refuseInputAliases(outputs: OutputPaths[], reads: ReadFile[], rules: OutputRules): Promise<void> {
  await refuseAliases(outputs.flatMap(writtenFiles), reads, rules);
}

/** The check itself, for any command: throws a one-line `ConfigError` when a file of `reads` is one of `written`. */
export async function refuseAliases(written: WrittenFile[], reads: ReadFile[], rules: OutputRules): Promise<void> {
  const readIds = await Promise.all(reads.map((r) => pathIdentity(r.path)));
  for (const w of written) {
    const wId = await pathIdentity(w.path);
    if (w.role !== 'workDir' && wId.file?.directory === true)
      throw new ConfigError(`'${w.path}' (${w.what}) is a directory, not a file: ${w.fix ?? 'choose another --output'}`);
    reads.forEach((r, i) => {
      const alias = sameFile(wId, readIds[i]) || (w.role === 'workDir' && isInside(readIds[i], wId));
      if (alias && !allowed(w, r, rules)) throw new ConfigError(aliasMessage(w, r, rules));
    });
  }
}
