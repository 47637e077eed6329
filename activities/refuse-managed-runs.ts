import { ConfigError } from '../src/contract/errors.js';
import { attemptsJournalPath, manifestPath } from '../src/contract/file-names.js';
import { managedOverwriteRefused, managedRunRefused } from '../src/contract/managed-run.js';
import { exists } from '../src/io/file-exists.js';
import { resolvePath } from '../src/io/resolve-path.js';

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
  const sourceCompanion = rolloutsPath === undefined || rolloutsPath === '' ? null : await managedCompanion(rolloutsPath);
  if (sourceCompanion !== null) throw new ConfigError(managedRunRefused('--rollouts', sourceCompanion));
}
