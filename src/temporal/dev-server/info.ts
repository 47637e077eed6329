/** What ensureDevServer returns for a server record: its addresses, ports and paths. */
import { HOST } from './defaults.js';
import { devServerPaths } from './paths.js';
import type { DevServerInfo, DevServerRecord } from './types.js';

export function toInfo(dir: string, record: DevServerRecord, namespace: string, started: boolean): DevServerInfo {
  const paths = devServerPaths(dir);
  return {
    address: `${HOST}:${record.port}`,
    uiUrl: `http://${HOST}:${record.uiPort}`,
    pid: record.pid,
    started,
    port: record.port,
    uiPort: record.uiPort,
    namespace,
    stateDir: dir,
    dbPath: record.dbPath,
    logPath: paths.logPath,
  };
}
