import { rm } from 'node:fs/promises';

/** Removes the run's work directory once its results are committed. */
export function removeWorkDir() {
  return async (workDir: string): Promise<void> => {
    await rm(workDir, { recursive: true, force: true });
  };
}
