/** ensureDevServer: reuse the state dir's running server, else start one under the lock. */
import { existsSync, rmSync } from 'node:fs';
import { DEFAULT_READY_TIMEOUT_MS, HOST } from './defaults.js';
import { ensureNamespace, probe } from './health.js';
import { toInfo } from './info.js';
import { acquireLock } from './lock.js';
import { devServerPaths, resolveStateDir } from './paths.js';
import { waitUntilReady } from './readiness.js';
import { readRecord, writeRecord } from './record-file.js';
import { ensureRetention, keepRetention, retentionDays } from './retention.js';
import { findOrphanServer, isOurServer } from './server-process.js';
import { startServer } from './start.js';
import type { DevServerInfo, EnsureDevServerOptions } from './types.js';

/**
 * Reuse the dev server recorded in the state dir if it is alive and answers, else start one
 * (detached) and wait until it answers; then set its namespace's retention (retention.ts). Safe to
 * call from several processes at once.
 */
export async function ensureDevServer(opts: EnsureDevServerOptions = {}): Promise<DevServerInfo> {
  const days = retentionDays(opts.retentionDays);
  const { info, retentionKept } = await reuseOrStart(opts, days);
  if (!retentionKept)
    await ensureRetention(info.port, info.namespace, days, Date.now() + (opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS));
  return info;
}

/**
 * The address `ensureDevServer` will most likely return, known without a connection: the state
 * dir's recorded server, while its process is alive and serves this state dir's SQLite file.
 * Null when there is none (ensureDevServer would start one). Nothing is checked on the server.
 */
export function recordedDevServerAddress(stateDir?: string): string | null {
  const paths = devServerPaths(resolveStateDir(stateDir));
  const known = readRecord(paths.serverFile);
  return known !== undefined && known.dbPath === paths.dbPath && isOurServer(known) ? `${HOST}:${known.port}` : null;
}

/** The server, and whether its namespace's retention was already set on the way (the fast path's one connection). */
async function reuseOrStart(opts: EnsureDevServerOptions, days: number): Promise<{ info: DevServerInfo; retentionKept: boolean }> {
  const dir = resolveStateDir(opts.stateDir);
  const namespace = opts.namespace ?? 'default';
  const readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const paths = devServerPaths(dir);

  // Fast path, no lock: a recorded server that is alive and answers (its retention kept on the same connection).
  const known = readRecord(paths.serverFile);
  if (known !== undefined && known.dbPath === paths.dbPath && isOurServer(known)) {
    const health = await probe(known.port, namespace, 3_000, (conn, described) => keepRetention(conn, namespace, days, described));
    if (health === 'ok') return { info: toInfo(dir, known, namespace, false), retentionKept: true };
    if (health === 'no-namespace') {
      await ensureNamespace(known.port, namespace, Date.now() + readyTimeoutMs);
      return { info: toInfo(dir, known, namespace, false), retentionKept: false };
    }
  }

  const release = await acquireLock(paths.lockFile, Date.now() + readyTimeoutMs + 30_000);
  try {
    // Re-check under the lock: another process may have started it meanwhile, or a server may be
    // running on our SQLite file without a server.json (a CLI killed right after spawning it).
    let record = readRecord(paths.serverFile);
    if (record !== undefined && record.dbPath !== paths.dbPath) record = undefined; // copied state dir
    if (record === undefined || !isOurServer(record)) {
      const orphan = findOrphanServer(paths.dbPath);
      if (orphan !== undefined) {
        record = orphan;
        writeRecord(paths.serverFile, record);
      }
    }
    if (record !== undefined && isOurServer(record)) {
      await waitUntilReady({ record, namespace, deadline: Date.now() + readyTimeoutMs, logPath: paths.logPath });
      await ensureNamespace(record.port, namespace, Date.now() + readyTimeoutMs);
      return { info: toInfo(dir, record, namespace, false), retentionKept: false };
    }
    if (existsSync(paths.serverFile)) rmSync(paths.serverFile, { force: true });
    return { info: await startServer(dir, paths, namespace, readyTimeoutMs, opts, record), retentionKept: false };
  } finally {
    release();
  }
}
