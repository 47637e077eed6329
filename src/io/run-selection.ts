/**
 * A run's selected outcomes, whichever kind of run it is (newer NeMo Gym's `RolloutStore.read`):
 * a managed run (a `<stem>_manifest.json` beside the output) is read through its manifest; a
 * legacy NeMo Gym run (materialized inputs beside it, no manifest) is imported in memory as NeMo
 * Gym's reader imports it, unless `importLegacy` is off; any other run is a plain run. Nothing is
 * written or locked. Refused, in one line saying what to do: a draft attempts journal (an earlier
 * managed format), and rows stamped `_ng_run_id` with no manifest beside them.
 */
import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';
import { attemptsJournalPath, manifestPath, materializedInputsPath, sidecarPath } from '../contract/file-names.js';
import { runTaggedWithoutManifest } from '../contract/managed-run.js';
import { legacyRunManifest, parseRunManifest } from '../contract/run-manifest.js';
import { exists } from './file-exists.js';
import { readManagedRun, type ReadRequest, type SelectedOutcome } from './managed-read.js';
import { resolvePath } from './resolve-path.js';
import { runTaggedLine } from './run-tagged.js';
import { readSelectedOutcomes } from './selected-outcomes.js';
import type { SelectionSummary } from './selection-summary.js';

type Emit = (o: SelectedOutcome) => void | Promise<void>;

async function checkOutput(output: string): Promise<void> {
  if (!(await exists(output))) throw new ConfigError(`no run output at '${output}': pass the --output of a finished or running run`);
  if ((await stat(output)).isDirectory()) throw new ConfigError(`--output '${output}' is a directory: pass the --output file of a run`);
}

/** Reads the run at `output`, emitting the wanted selected outcomes; returns the summary. */
export async function readRunSelection(output: string, req: ReadRequest, emit: Emit): Promise<SelectionSummary> {
  await checkOutput(output);
  const resolved = await resolvePath(output);
  const journal = attemptsJournalPath(resolved);
  if (await exists(journal))
    throw new ConfigError(
      `${output} has a draft attempts journal beside it (${journal}), an earlier managed-run format this reader does not read: read the run with the NeMo Gym revision that wrote it`,
    );
  const paths = { output: resolved, sidecar: sidecarPath(resolved), materialized: materializedInputsPath(resolved) };
  const manifestFile = manifestPath(resolved);
  if (await exists(manifestFile))
    return readManagedRun(paths, parseRunManifest(await readFile(manifestFile, 'utf8'), manifestFile), req, emit);
  for (const file of [resolved, paths.sidecar]) {
    const lineNo = await runTaggedLine(file);
    if (lineNo !== null) throw new ConfigError(runTaggedWithoutManifest(file, lineNo));
  }
  if (req.importLegacy && (await exists(paths.materialized))) {
    try {
      return await readManagedRun(paths, legacyRunManifest(), req, emit);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      throw new ConfigError(
        `${e.message} (read as a legacy NeMo Gym run, since ${paths.materialized} is beside it; --no-import-legacy reads it as a plain run)`,
      );
    }
  }
  return readSelectedOutcomes({ output, sidecar: sidecarPath(output) }, req, emit);
}

/**
 * NeMo Gym's `raw_outcomes_are_selected(path, artifacts)`: whether a row-oriented reader may read
 * the run without filtering. A manifest alone does not require a different reader; superseded rows
 * (answers superseded by interrupted attempts too) and cut-off last lines do. The whole run is
 * validated, but only the `artifacts` the caller reads (default: the results and the sidecar) are compared.
 */
export async function rawOutcomesAreSelected(path: string, artifacts?: readonly string[]): Promise<boolean> {
  const req: ReadRequest = { want: new Set(), rows: false, importLegacy: true, retryTerminalTimeouts: false, artifacts };
  return (await readRunSelection(path, req, () => undefined)).rawOutcomesAreSelected;
}
