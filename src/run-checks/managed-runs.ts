import { ConfigError } from '../contract/errors.js';
import { attemptsJournalPath, manifestPath } from '../contract/file-names.js';
import { managedOverwriteRefused, managedRunRefused, runTaggedWithoutManifest } from '../contract/managed-run.js';
import { sidecarPath } from '../contract/file-names.js';
import { exists } from '../io/file-exists.js';
import { resolvePath } from '../io/resolve-path.js';
import { runTaggedLine } from '../io/run-tagged.js';

/** The manifest or attempts journal beside `path` (resolved as NeMo Gym resolves it), if any. */
export async function managedCompanion(path: string): Promise<string | null> {
  const resolved = await resolvePath(path);
  for (const companion of [manifestPath(resolved), attemptsJournalPath(resolved)]) if (await exists(companion)) return companion;
  return null;
}

/**
 * Runs that newer NeMo Gym's run store manages (a `<stem>_manifest.json` or `<stem>_attempts.jsonl`
 * beside the results) hold superseded attempts that only a selecting reader may count; reverify
 * does not mix them into a plain run. Refused before anything is written, as newer NeMo Gym's
 * reverify refuses them: `--rollouts` from such a run, an `--output` that is one, and `--overwrite`
 * of one (which would delete the run's outcomes and leave its manifest pointing at nothing).
 */
export async function refuseManagedRuns(output: string, rolloutsPath: string | undefined, overwrite: boolean): Promise<void> {
  const ownCompanion = await managedCompanion(output);
  if (ownCompanion !== null)
    throw new ConfigError(overwrite ? managedOverwriteRefused(ownCompanion) : managedRunRefused('--output', ownCompanion, output));
  await refuseRunTagged(output);
  const sourceCompanion = rolloutsPath === undefined || rolloutsPath === '' ? null : await managedCompanion(rolloutsPath);
  if (sourceCompanion !== null) throw new ConfigError(managedRunRefused('--rollouts', sourceCompanion, rolloutsPath!));
}

/**
 * A managed run tags every outcome with its `_ng_run_id`; such rows in an output (or its sidecar)
 * with no manifest beside them belong to a run whose manifest was lost (newer NeMo Gym's
 * `_unverified_manifest` refuses them): reverify neither writes into nor reads them. Every row of
 * both files is checked (a plain run's rows never carry the key). `--rollouts` is not checked: a
 * selected-result projection of a managed run keeps its tags and is what reverify may read.
 */
export async function refuseRunTagged(output: string): Promise<void> {
  const resolved = await resolvePath(output);
  for (const file of [resolved, sidecarPath(resolved)]) {
    const lineNo = await runTaggedLine(file);
    if (lineNo !== null) throw new ConfigError(runTaggedWithoutManifest(file, lineNo));
  }
}
