import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** Symlinks followed at most (Linux's own limit). */
const MAX_LINKS = 40;

/**
 * Python's `Path.resolve()` (not strict): the absolute path with every symlink resolved, also one
 * whose target does not exist yet (a dangling symlink leads to where its target will be created);
 * for a path that does not exist, its longest existing ancestor is resolved and the rest kept.
 * NeMo Gym names a run's companions (manifest, run lock) from the resolved output, so a symlinked
 * output and its target share them; so does the run's workflow id (src/temporal/workflow-id.ts).
 * The result is the same before and after the file is created.
 */
export function resolvePathSync(p: string): string {
  return resolveAbsolute(resolve(p), 0);
}

/** `resolvePathSync`, for async callers. */
export function resolvePath(p: string): Promise<string> {
  return Promise.resolve(resolvePathSync(p));
}

function resolveAbsolute(abs: string, links: number): string {
  try {
    return realpathSync(abs);
  } catch {
    // Missing here or below: resolve the parent, then follow this name if it is a dangling symlink.
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  const here = join(resolveAbsolute(parent, links), basename(abs));
  let target: string;
  try {
    target = readlinkSync(here);
  } catch {
    return here;
  }
  return links >= MAX_LINKS ? here : resolveAbsolute(resolve(dirname(here), target), links + 1);
}
