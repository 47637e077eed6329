import { ConfigError } from '../contract/errors.js';
import { attemptsJournalPath, manifestPath } from '../contract/file-names.js';
import { managedOverwriteRefused, managedRunRefused, runTaggedWithoutManifest } from '../contract/managed-run.js';
import { topLevelSpans } from '../contract/json-spans.js';
import { RUN_ID_KEY } from '../contract/keys.js';
import { sidecarPath } from '../contract/file-names.js';
import { firstRow } from '../io/first-row.js';
import { exists } from '../io/file-exists.js';
import { resolvePath } from '../io/resolve-path.js';

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
    throw new ConfigError(overwrite ? managedOverwriteRefused(ownCompanion) : managedRunRefused('--output', ownCompanion));
  await refuseRunTagged(output);
  const sourceCompanion = rolloutsPath === undefined || rolloutsPath === '' ? null : await managedCompanion(rolloutsPath);
  if (sourceCompanion !== null) throw new ConfigError(managedRunRefused('--rollouts', sourceCompanion));
}

/**
 * A managed run tags every outcome with its `_ng_run_id`; such rows in an output (or its sidecar)
 * with no manifest beside them belong to a run whose manifest was lost (newer NeMo Gym's
 * `_unverified_manifest` refuses them): reverify neither writes into nor reads them. The first row
 * of each file tells (a plain run's rows never carry the key). `--rollouts` is not checked: a
 * selected-result projection of a managed run keeps its tags and is what reverify may read.
 */
export async function refuseRunTagged(output: string): Promise<void> {
  const resolved = await resolvePath(output);
  for (const file of [resolved, sidecarPath(resolved)]) {
    const row = await firstRow(file);
    if (row === null) continue;
    let tagged = false;
    try {
      tagged = topLevelSpans(row).has(RUN_ID_KEY);
    } catch {
      continue; // not a JSON object: the plan reports that line with its file:line
    }
    if (tagged) throw new ConfigError(runTaggedWithoutManifest(file));
  }
}
