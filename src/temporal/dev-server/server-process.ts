/**
 * Recognizing a state dir's dev-server process: the pid server.json names, or an unrecorded
 * `start-dev` on its SQLite file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { DEFAULT_DEV_SERVER_PORT } from './defaults.js';
import { pidAlive, processArgs } from './processes.js';
import type { DevServerRecord } from './types.js';

/** The recorded pid is alive and (where /proc tells) is `start-dev` on this record's SQLite file. */
export function isOurServer(record: DevServerRecord): boolean {
  if (!pidAlive(record.pid)) return false;
  const args = processArgs(record.pid);
  if (args === undefined) return existsSync('/proc') ? false : true;
  return args.includes('start-dev') && args.includes(record.dbPath);
}

/** A live `start-dev` on this SQLite file that no server.json names (Linux only). */
export function findOrphanServer(dbPath: string): DevServerRecord | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const args = processArgs(pid);
    if (args === undefined || !args.includes('start-dev') || !args.includes(dbPath)) continue;
    if (!pidAlive(pid)) continue;
    const flag = (name: string): number | undefined => {
      const i = args.indexOf(name);
      const v = i >= 0 ? Number(args[i + 1]) : NaN;
      return Number.isInteger(v) ? v : undefined;
    };
    const port = flag('--port') ?? DEFAULT_DEV_SERVER_PORT;
    return {
      pid,
      port,
      uiPort: flag('--ui-port') ?? port + 1000,
      dbPath,
      version: 'unknown',
      binary: args[0] ?? 'temporal',
      startedAt: new Date().toISOString(),
    };
  }
  return undefined;
}
