/** devServerStatus: what is known about the state dir's server, without starting anything. */
import { HOST } from './defaults.js';
import { probe } from './health.js';
import { devServerPaths, resolveStateDir } from './paths.js';
import { readRecord } from './record-file.js';
import { findOrphanServer, isOurServer } from './server-process.js';
import type { DevServerStatus } from './types.js';

/** What is known about the dev server of a state dir, without starting anything. */
export async function devServerStatus(dir?: string): Promise<DevServerStatus> {
  const stateDirPath = resolveStateDir(dir);
  const paths = devServerPaths(stateDirPath);
  const base = { stateDir: stateDirPath, dbPath: paths.dbPath, logPath: paths.logPath };
  let record = readRecord(paths.serverFile);
  if (record === undefined || !isOurServer(record)) record = findOrphanServer(paths.dbPath) ?? record;
  if (record === undefined) return { ...base, running: false, healthy: false };
  const running = isOurServer(record);
  const healthy = running && (await probe(record.port, 'default', 3_000)) !== 'down';
  return {
    ...base,
    running,
    healthy,
    pid: record.pid,
    address: `${HOST}:${record.port}`,
    uiUrl: `http://${HOST}:${record.uiPort}`,
    version: record.version,
    startedAt: record.startedAt,
  };
}
