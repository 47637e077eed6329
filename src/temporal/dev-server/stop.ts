/** stopDevServer: terminate the state dir's server (recorded or orphan), remove its server.json. */
import { rmSync } from 'node:fs';
import { acquireLock } from './lock.js';
import { devServerPaths, resolveStateDir } from './paths.js';
import { terminate } from './processes.js';
import { readRecord } from './record-file.js';
import { findOrphanServer, isOurServer } from './server-process.js';

/**
 * Stop the dev server of a state dir: SIGTERM, wait for the process to exit (SIGKILL after 20 s),
 * remove server.json. Returns whether a running server was stopped.
 */
export async function stopDevServer(dir?: string): Promise<{ stopped: boolean; pid?: number }> {
  const stateDirPath = resolveStateDir(dir);
  const paths = devServerPaths(stateDirPath);
  const release = await acquireLock(paths.lockFile, Date.now() + 60_000);
  try {
    let record = readRecord(paths.serverFile);
    if (record === undefined || !isOurServer(record)) record = findOrphanServer(paths.dbPath) ?? record;
    if (record === undefined) return { stopped: false };
    let stopped = false;
    if (isOurServer(record)) {
      await terminate(record.pid);
      stopped = true;
    }
    rmSync(paths.serverFile, { force: true });
    return { stopped, pid: record.pid };
  } finally {
    release();
  }
}
