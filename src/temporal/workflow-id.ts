import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The absolute path with its directory's symlinks resolved (the file itself may not exist yet). */
function canonicalPath(path: string): string {
  const abs = resolve(path);
  try {
    return join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

/**
 * The run's workflow id, derived from the absolute output path: one controller per output file,
 * and running the same command again attaches to the live run instead of starting a second writer.
 */
export function workflowIdForOutput(outputPath: string): string {
  // One output reached through a symlinked directory is still one run.
  const abs = canonicalPath(outputPath);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 16);
  const name = basename(abs)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 80);
  return `reverify-${name}-${hash}`;
}
