import { rm } from 'node:fs/promises';
import { whileHeartbeating } from './heartbeating.js';

/** Removes the run's work directory once its results are committed. */
export function removeWorkDir(workDir: string): Promise<void> {
  return whileHeartbeating(() => rm(workDir, { recursive: true, force: true }));
}
