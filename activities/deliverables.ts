import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NOT_DELIVERABLES } from '../src/contract/invalid-judge-move.js';

/**
 * Whether a row's `deliverables_dir` (a path, relative ones from the worker's directory) is a
 * directory holding at least one deliverable: a regular file (symlinks followed) not named in
 * `NOT_DELIVERABLES`. Anything else, unreadable directories included, is false.
 */
export async function hasDeliverable(dir: unknown): Promise<boolean> {
  if (typeof dir !== 'string' || dir === '') return false;
  try {
    for (const name of await readdir(dir)) {
      if (NOT_DELIVERABLES.has(name)) continue;
      if ((await stat(join(dir, name)).catch(() => null))?.isFile()) return true;
    }
  } catch {
    return false;
  }
  return false;
}
