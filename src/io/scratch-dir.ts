import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Runs `body` with a fresh private directory `<parent>/<prefix>XXXXXX` (for an external sort's run
 * files), made first (with `parent`, if missing) and removed with its content afterwards, whether
 * `body` succeeds or throws. A fresh name per call: two attempts of one activity never share files.
 */
export async function withScratchDir<T>(parent: string, prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, prefix));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
