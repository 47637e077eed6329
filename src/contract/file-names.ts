/**
 * File-name derivation of spec §1.1. Pure string functions (no file system access). A path's
 * stem/suffix follow Python's `pathlib`: the suffix is the last `.xxx` of the base name, except for
 * a leading dot (`.hidden`) or a trailing one (`out.`), which give no suffix.
 */
import { basename, dirname, join } from 'node:path';

/** Python `PurePath.stem` of the base name of `p`. */
export function pathStem(p: string): string {
  const name = basename(p);
  const i = name.lastIndexOf('.');
  return i > 0 && i < name.length - 1 ? name.slice(0, i) : name;
}

function sibling(p: string, name: string): string {
  return join(dirname(p), name);
}

/** `D/<S>_failures.jsonl`: the failures sidecar of any JSONL (`a.b.jsonl` -> `a.b_failures.jsonl`, `out` -> `out_failures.jsonl`). */
export function sidecarPath(p: string): string {
  return sibling(p, `${pathStem(p)}_failures.jsonl`);
}

/** `D/<S>_aggregate_metrics.json`. */
export function aggregateMetricsPath(p: string): string {
  return sibling(p, `${pathStem(p)}_aggregate_metrics.json`);
}

/** `D/<S>_coverage.json`: the run's coverage and saved attempt cap (the seed's `write_coverage`; src/io/coverage-file.ts). */
export function coveragePath(p: string): string {
  return sibling(p, `${pathStem(p)}_coverage.json`);
}

/**
 * `D/<S>_unstarted.jsonl`: the rollouts the run's last ending left never started (the seed's
 * `record_unstarted` evidence; not an outcome, `--resume` runs them; src/planning/unstarted-rows.ts).
 */
export function unstartedPath(p: string): string {
  return sibling(p, `${pathStem(p)}_unstarted.jsonl`);
}

/**
 * `D/<S>_noise.jsonl`: the judge's second verdicts of the rows `--noise-sample N` re-judged (the judge
 * noise floor, docs/statistics.md); apart from the output, which they never change.
 */
export function noisePath(p: string): string {
  return sibling(p, `${pathStem(p)}_noise.jsonl`);
}

/** `D/<S>_materialized_inputs.jsonl`: the materialized inputs written by `gym eval run` for output `p`. */
export function materializedInputsPath(p: string): string {
  return sibling(p, `${pathStem(p)}_materialized_inputs.jsonl`);
}

/** `D/<S>_manifest.json`: the run manifest of a NeMo Gym managed run (newer `gym eval run`). */
export function manifestPath(p: string): string {
  return sibling(p, `${pathStem(p)}_manifest.json`);
}

/** `D/<S>_attempts.jsonl`: the draft dispatch journal of an earlier managed-run format. */
export function attemptsJournalPath(p: string): string {
  return sibling(p, `${pathStem(p)}_attempts.jsonl`);
}

/** `D/<S>_run.lock`: the run lock; `p` must be resolved first (src/io/run-lock.ts). */
export function runLockFilePath(p: string): string {
  return sibling(p, `${pathStem(p)}_run.lock`);
}

/**
 * `D/.<S>_run.lock.driver` beside a run lock: held by the `reverify run` that holds the run lock for
 * its whole run, so that the run's workers in other processes know the holder is their driver
 * (src/io/run-lock.ts). Never written, never deleted.
 */
export function driverLeasePath(lockPath: string): string {
  return sibling(lockPath, `.${basename(lockPath)}.driver`);
}

/** `D/<S>_history.json`: the run's full workflow history, written when the run ends. */
export function historyPath(p: string): string {
  return sibling(p, `${pathStem(p)}_history.json`);
}

/** `D/.<basename>.reverify`: the run's work directory (plans, batch parts), removed when the run ends. */
export function workDirPath(p: string): string {
  return sibling(p, `.${basename(p)}.reverify`);
}

/**
 * `D/.<basename>.omitting.jsonl` and `.json`: the omission rows a `reverify omit` is appending to the
 * sidecar, and the sidecar length before them (src/io/omission-append.ts); removed once appended.
 */
export function omittingPaths(p: string): { rows: string; header: string } {
  return { rows: sibling(p, `.${basename(p)}.omitting.jsonl`), header: sibling(p, `.${basename(p)}.omitting.json`) };
}

/** `D/<S>_report.html`: what `reverify report` writes by default next to the main output. */
export function reportHtmlPath(p: string): string {
  return sibling(p, `${pathStem(p)}_report.html`);
}

/** `D/<prefix><basename>`: the prefix applies to the base name only (`results/unsafe_run.jsonl`). */
export function prefixedOutputPath(p: string, prefix: string): string {
  return sibling(p, prefix + basename(p));
}

/** A file or directory named after a run's main output, and what the messages call it. */
export interface DerivedFile {
  role:
    'output' | 'sidecar' | 'metrics' | 'coverage' | 'unstarted' | 'noise' | 'history' | 'runLock' | 'driverLease' | 'report' | 'workDir';
  what: string;
  path: string;
  /** Written as a temporary file beside it first, then renamed (src/io/atomic-file.ts). */
  viaTemp: boolean;
}

/**
 * Every name made from the main output `output` (the `unsafe_` prefix already applied): the files
 * and the work directory a run writes, the run lock, and `reverify report`'s default HTML file.
 */
export function derivedFiles(output: string): DerivedFile[] {
  return [
    { role: 'output', what: 'the output', path: output, viaTemp: false },
    { role: 'sidecar', what: 'the failures sidecar', path: sidecarPath(output), viaTemp: false },
    { role: 'metrics', what: 'the aggregate metrics file', path: aggregateMetricsPath(output), viaTemp: true },
    { role: 'coverage', what: 'the coverage file', path: coveragePath(output), viaTemp: true },
    { role: 'unstarted', what: 'the unstarted rollouts file', path: unstartedPath(output), viaTemp: true },
    { role: 'noise', what: 'the judge noise file', path: noisePath(output), viaTemp: false },
    { role: 'history', what: 'the workflow history file', path: historyPath(output), viaTemp: true },
    { role: 'runLock', what: 'the run lock', path: runLockFilePath(output), viaTemp: false },
    { role: 'driverLease', what: "the run driver's lease", path: driverLeasePath(runLockFilePath(output)), viaTemp: false },
    { role: 'report', what: 'the HTML report', path: reportHtmlPath(output), viaTemp: true },
    { role: 'workDir', what: 'the work directory', path: workDirPath(output), viaTemp: false },
  ];
}
