/**
 * Errors of writing a file that the user fixes on the machine (a full disk, a quota, a read-only or
 * forbidden place) carry the path and what to do: Node's own message for a write through a file
 * handle (`ENOSPC: no space left on device, write`) names no file. A full disk or quota stays
 * retryable: a run's activity is retried by Temporal and goes on by itself once there is room
 * again. The others fail the run at once (`nonTransientFsError`): retrying does not change them.
 */

const WHAT: Record<string, [problem: string, fix: string]> = {
  ENOSPC: ['no space left on device', 'free space'],
  EDQUOT: ['disk quota exceeded', 'free space or raise the quota'],
  EROFS: ['read-only file system', 'make it writable or choose another --output'],
  EACCES: ['permission denied', 'fix its permissions'],
  EPERM: ['operation not permitted', 'fix its permissions'],
};

/** The codes a retry may get past by itself: space freed meanwhile. */
const TRANSIENT = new Set(['ENOSPC', 'EDQUOT']);

/** File-system errors that retrying cannot fix (besides those of `WHAT` not in `TRANSIENT`). */
const NON_TRANSIENT: Record<string, [problem: string, fix: string]> = {
  ENAMETOOLONG: ['name too long', 'choose a shorter --output name'],
  ENOTDIR: ['a part of the path is a file, not a directory', 'move that file or choose another --output'],
  EISDIR: ['it is a directory', 'move that directory or choose another --output'],
};

/** A file could not be written for a reason the user fixes; the message names the file. */
export class DiskWriteError extends Error {
  override readonly name = 'DiskWriteError';

  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    const [problem, fix] = WHAT[code];
    const retried = TRANSIENT.has(code) ? ' (a live run retries by itself)' : '';
    super(`cannot write '${path}': ${problem} (${code}); ${fix}, then run the same command again${retried}`);
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

/**
 * The one line of a file-system error that retrying cannot fix (a name too long, a file in the way
 * of a directory or the reverse, a permission, a read-only file system), naming the path and what to
 * do; null for any other error (a full disk, a network error, an error with no path...).
 */
export function nonTransientFsError(err: unknown): string | null {
  if (err instanceof DiskWriteError) return TRANSIENT.has(err.code) ? null : fsErrorLine(`'${err.path}'`, err.code, 'write');
  const e = err as (NodeJS.ErrnoException & { dest?: string }) | null;
  if (typeof e?.code !== 'string' || typeof e.path !== 'string' || TRANSIENT.has(e.code)) return null;
  if (!Object.hasOwn(NON_TRANSIENT, e.code) && !Object.hasOwn(WHAT, e.code)) return null;
  return fsErrorLine(e.dest === undefined ? `'${e.path}'` : `'${e.path}' -> '${e.dest}'`, e.code, e.syscall ?? 'use');
}

function fsErrorLine(where: string, code: string, syscall: string): string {
  const [problem, fix] = NON_TRANSIENT[code] ?? WHAT[code];
  const again = code === 'ENAMETOOLONG' ? '' : ', then run the same command with --resume';
  return `cannot ${syscall} ${where}: ${problem} (${code}); retrying cannot fix it: ${fix}${again}`;
}
