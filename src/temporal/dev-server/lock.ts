/**
 * `<state>/server.lock`: the O_EXCL lock that keeps two processes from starting or stopping one
 * server at once.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { ConfigError } from '../../contract/errors.js';
import { pidAlive } from './processes.js';
import { sleep } from './sleep.js';

/** A lock older than this is considered abandoned even if its pid looks alive (pid reuse). */
const LOCK_STALE_MS = 5 * 60_000;

/**
 * Take `<state>/server.lock` (created with O_EXCL). A lock whose pid is dead, or that is older than
 * 5 minutes, is stale and removed. Returns the release function.
 */
export async function acquireLock(lockFile: string, deadline: number): Promise<() => void> {
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx');
      try {
        writeFileSync(fd, JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
      } finally {
        closeSync(fd);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          const holder = JSON.parse(readFileSync(lockFile, 'utf8')) as { pid?: number };
          if (holder.pid === process.pid) rmSync(lockFile, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLockHolder(lockFile);
    if (holder === undefined) continue; // vanished between open and read
    const age = Date.now() - holder.mtimeMs;
    // No pid yet: the holder is between creating and writing the file; stale only if that lasts.
    const stale = age > LOCK_STALE_MS || (holder.pid === undefined ? age > 10_000 : !pidAlive(holder.pid));
    if (stale) {
      rmSync(lockFile, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new ConfigError(
        `another reverify process (pid ${holder.pid ?? 'unknown'}) is starting or stopping the Temporal dev server (lock ${lockFile}); wait for it, or delete the lock file if that process is gone`,
      );
    }
    await sleep(100);
  }
}

function readLockHolder(lockFile: string): { pid: number | undefined; mtimeMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(lockFile, 'r');
  } catch {
    return undefined;
  }
  try {
    const { mtimeMs, size } = fstatSync(fd);
    const buf = Buffer.alloc(Math.min(size, 4096));
    const n = readSync(fd, buf, 0, buf.length, 0);
    let pid: number | undefined;
    try {
      const parsed = JSON.parse(buf.subarray(0, n).toString('utf8')) as { pid?: unknown };
      pid = typeof parsed.pid === 'number' ? parsed.pid : undefined;
    } catch {
      pid = undefined; // being written right now, or garbage
    }
    return { pid, mtimeMs };
  } finally {
    closeSync(fd);
  }
}
