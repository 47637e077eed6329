import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { resolvePathSync } from '../io/resolve-path.js';

/**
 * The output's one identity: its real path (every symlink resolved, of the file or of a directory
 * above it; src/io/resolve-path.ts), the same before the file exists and after the run has created
 * it. A hard-linked output (one file, several names) has no one path, so it is refused: two names
 * would be two workflows writing one file, each truncating it to its own length.
 */
export function outputIdentity(outputPath: string): string {
  const real = resolvePathSync(outputPath);
  let links = 0;
  try {
    const st = statSync(real);
    if (st.isFile()) links = st.nlink;
  } catch {
    // Not created yet: its path is its identity.
  }
  if (links > 1)
    throw new ConfigError(
      `--output '${outputPath}' is a file with ${links} names (hard links), so two names could be two runs writing it: ` +
        'give it one name (remove its other hard links, or copy it) and run again',
    );
  return real;
}

/**
 * The run's workflow id, derived from the output's identity: one controller per output file, and
 * running the same command again, under any name of that file, attaches to the live run instead of
 * starting a second writer. Every command that finds a run by its output uses it.
 */
export function workflowIdForOutput(outputPath: string): string {
  const real = outputIdentity(outputPath);
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 16);
  const name = basename(real)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 80);
  return `reverify-${name}-${hash}`;
}
