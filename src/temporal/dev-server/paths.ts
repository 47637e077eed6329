/** The state directory and the files kept in it: server.json, server.lock, log, SQLite file. */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stateDir as defaultStateDir } from '../state-dir.js';

const SERVER_FILE = 'server.json';
const LOCK_FILE = 'server.lock';
const LOG_FILE = 'temporal-server.log';
const DB_FILE = 'temporal.sqlite';

/** Paths of the files kept in a state dir. */
export function devServerPaths(dir: string): { serverFile: string; lockFile: string; logPath: string; dbPath: string } {
  return {
    serverFile: join(dir, SERVER_FILE),
    lockFile: join(dir, LOCK_FILE),
    logPath: join(dir, LOG_FILE),
    dbPath: join(dir, DB_FILE),
  };
}

export function resolveStateDir(dir: string | undefined): string {
  if (dir === undefined) return defaultStateDir();
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true });
  return abs;
}
