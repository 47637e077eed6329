/**
 * Errors of writing a file that the user fixes on the machine (a full disk, a quota, a read-only or
 * forbidden place) carry the path and what to do: Node's own message for a write through a file
 * handle (`ENOSPC: no space left on device, write`) names no file. They stay retryable: a run's
 * activity is retried by Temporal and goes on by itself once there is room again.
 */

const WHAT: Record<string, [problem: string, fix: string]> = {
  ENOSPC: ['no space left on device', 'free space'],
  EDQUOT: ['disk quota exceeded', 'free space or raise the quota'],
  EROFS: ['read-only file system', 'make it writable or choose another --output'],
  EACCES: ['permission denied', 'fix its permissions'],
  EPERM: ['operation not permitted', 'fix its permissions'],
};

/** A file could not be written for a reason the user fixes; the message names the file. */
export class DiskWriteError extends Error {
  override readonly name = 'DiskWriteError';

  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    const [problem, fix] = WHAT[code];
    super(`cannot write '${path}': ${problem} (${code}); ${fix}, then run the same command again (a live run retries by itself)`);
  }
}

/** `err` as a `DiskWriteError` naming `path` when it is one of those errors; else `err` unchanged. */
export function withWritePath(err: unknown, path: string): unknown {
  if (err instanceof DiskWriteError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && Object.hasOwn(WHAT, code) ? new DiskWriteError(path, code) : err;
}

/** Runs `body`, which writes `path`; its disk errors name `path`. */
export async function writingTo<T>(path: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw withWritePath(err, path);
  }
}
