import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Python's `Path.resolve()` (not strict): the absolute path with symlinks resolved; for a path
 * that does not exist yet, its directory is resolved and the name kept. NeMo Gym names a run's
 * companions (manifest, run lock) from the resolved output, so a symlinked output and its target
 * share them.
 */
export async function resolvePath(p: string): Promise<string> {
  const abs = resolve(p);
  return realpath(abs).catch(async () => join(await realpath(dirname(abs)).catch(() => dirname(abs)), basename(abs)));
}
