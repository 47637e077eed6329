/** ensureDevServer: reuse the state dir's running server, else start one under the lock. */
import { existsSync, rmSync } from 'node:fs';
import { DEFAULT_READY_TIMEOUT_MS } from './defaults.js';
import { ensureNamespace, probe } from './health.js';
import { toInfo } from './info.js';
import { acquireLock } from './lock.js';
import { devServerPaths, resolveStateDir } from './paths.js';
import { waitUntilReady } from './readiness.js';
import { readRecord, writeRecord } from './record-file.js';
import { ensureRetention, retentionDays } from './retention.js';
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
  const info = await reuseOrStart(opts);
  await ensureRetention(info.port, info.namespace, days, Date.now() + (opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS));
  return info;
}

async function reuseOrStart(opts: EnsureDevServerOptions): Promise<DevServerInfo> {
  const dir = resolveStateDir(opts.stateDir);
  const namespace = opts.namespace ?? 'default';
  const readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const paths = devServerPaths(dir);

  // Fast path, no lock: a recorded server that is alive and answers.
  const known = readRecord(paths.serverFile);
  if (known !== undefined && known.dbPath === paths.dbPath && isOurServer(known)) {
    const health = await probe(known.port, namespace, 3_000);
    if (health !== 'down') {
      if (health === 'no-namespace') await ensureNamespace(known.port, namespace, Date.now() + readyTimeoutMs);
      return toInfo(dir, known, namespace, false);
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
      return toInfo(dir, record, namespace, false);
    }
    if (existsSync(paths.serverFile)) rmSync(paths.serverFile, { force: true });
    return await startServer(dir, paths, namespace, readyTimeoutMs, opts, record);
  } finally {
    release();
  }
}
