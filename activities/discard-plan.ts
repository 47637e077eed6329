import { rm, rmdir } from 'node:fs/promises';
import { dirname, relative } from 'node:path';

/**
 * Removes what an ATIF plan created when the run is refused before it opens its outputs (the
 * preflight, an existing output): the work directory, then each directory the plan created for it
 * up to `createdDir` (the first one `mkdir` made), only while they are empty. Nothing else is touched.
 */
export async function discardPlan(workDir: string, createdDir: string | null): Promise<void> {
  await rm(workDir, { recursive: true, force: true });
  if (createdDir === null) return;
  for (let dir = dirname(workDir); ; dir = dirname(dir)) {
    const rel = relative(createdDir, dir);
    if (rel.startsWith('..') || dir === dirname(dir)) return;
    if (
      !(await rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      return;
    if (rel === '') return;
  }
}
