/**
 * What a read of a run's selected outcomes reports, plain run or managed, and NeMo Gym's
 * `raw_outcomes_are_selected` computed from it: whether a row-oriented reader that reads the
 * given files (default: all the run's outcome files) sees exactly the selected outcomes. A
 * manifest alone does not change the answer; a superseded row, or a cut-off last line, in a file
 * read does.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import type { Disposition } from '../contract/outcome-selection.js';

export interface FileSelection {
  path: string;
  /** Saved rows (records) in the file. */
  rows: number;
  /** Of them, rows that are selected outcomes. */
  selected: number;
  cutOff: boolean;
}

export interface SelectionSummary {
  counts: Record<Disposition, number>;
  /** Saved rows no disposition selects (superseded by a later row or attempt of their rollout). */
  superseded: number;
  /** `raw_outcomes_are_selected` for the files read (`artifacts`, default all). */
  rawOutcomesAreSelected: boolean;
  /** The run's outcome files that exist (the sidecar may not). */
  files: string[];
  /** Files whose last line is cut off (an interrupted write): not a row, and a plain reader would fail on it. */
  cutOff: string[];
  perFile: FileSelection[];
  /** Selected failures that are terminal under the read's timeout policy (not retried by a resume). */
  terminalFailures: number;
  /** Set for a managed run (a manifest, or a legacy import of one without). */
  managed?: ManagedFacts;
}

export interface ManagedFacts {
  runId: string | null;
  /** Materialized rollouts no attempt was allocated for. */
  neverDispatched: number;
  legacyImport: boolean;
  /** The timeout policy used: the manifest's saved one, or the option for a legacy import. */
  retryTerminalTimeouts: boolean;
}

/** `raw_outcomes_are_selected` over the files a caller reads (`artifacts`: paths; default every outcome file). */
export function rawSelectedFor(perFile: readonly FileSelection[], artifacts?: readonly string[]): boolean {
  let read = perFile;
  if (artifacts !== undefined) {
    const known = new Map(perFile.map((f) => [resolve(f.path), f]));
    read = artifacts.map((a) => {
      const f = known.get(resolve(a));
      if (f === undefined)
        throw new ConfigError(
          `--artifacts: '${a}' is not an outcome file of this run (${perFile.map((p) => p.path).join(', ') || 'none exist'}); name the results or failures file you read`,
        );
      return f;
    });
  }
  return read.every((f) => f.rows === f.selected && !f.cutOff);
}
