/**
 * The run lock of newer NeMo Gym (`rollout_recovery.run_lock`): an exclusive, non-blocking
 * `flock(2)` on `<resolved output stem>_run.lock` beside the output, never unlinked. A NeMo Gym
 * collector holds it across its whole run; so does the `reverify run` that drives a run
 * (`holdRunLock`, from before the workflow starts to its end), and every step that writes the
 * outputs takes it (`withRunLock`), so that a collector is refused for the whole run.
 *
 * Within one process the lock is shared (counted): the driver's hold and the steps of its
 * in-process worker never conflict, and `flock` is taken once. A worker in another process
 * (`reverify worker`, `--workers N`) cannot share that descriptor: when the lock is held elsewhere,
 * it writes only if the holder is the run's driver, which holds a second lock, the driver lease
 * (`.<lock name>.driver`, file-names.ts), for as long as it holds the run lock (taken after it,
 * dropped before it). The run lock held and the lease free: another tool holds it, refused.
 *
 * Node has no `flock` in core, and no npm package offers one with prebuilt binaries (`fs-ext`
 * compiles with node-gyp at install). So the lock is taken by util-linux's `flock` on a descriptor
 * of one long-lived helper process (flock-holder.ts), which holds it until we drop it, or until
 * this process dies (even SIGKILL): then the helper exits and the kernel drops the lock, no stale
 * owner. It is the same kernel lock Python's `fcntl.flock` takes, so a NeMo Gym collector sees it.
 */
import { ConfigError } from '../contract/errors.js';
import { runLockHeld } from '../contract/managed-run.js';
import { driverLeasePath, runLockFilePath } from '../contract/file-names.js';
import { exists } from './file-exists.js';
import { flockHolder, type FlockHolder } from './flock-holder.js';
import { resolvePath } from './resolve-path.js';

/** Raised when another process holds the run lock; its message is NeMo Gym's. */
export class RunLockHeldError extends ConfigError {}

/** `<resolved output stem>_run.lock`: symlinks resolved as Python's `Path.resolve()` does. */
export async function runLockPath(output: string): Promise<string> {
  return runLockFilePath(await resolvePath(output));
}

interface Held {
  /** The helper that holds the lock, and its descriptor that does; null: the run's driver holds it in another process. */
  holder: FlockHolder;
  fd: number | null;
  users: number;
  /** Set when the last user let go: resolves once the lock is dropped. */
  releasing?: Promise<void>;
}

const heldHere = new Map<string, Promise<Held>>();

/**
 * This process's hold on the lock at `path`: shared while held; a step arriving while the last
 * one lets go waits for the lock to be dropped and takes it anew (never a conflict with ourselves).
 */
async function enter(path: string): Promise<Held> {
  for (;;) {
    let entry = heldHere.get(path);
    if (!entry) {
      const taking = takeLock(path);
      entry = taking;
      heldHere.set(path, taking);
      taking.catch(() => {
        if (heldHere.get(path) === taking) heldHere.delete(path);
      });
    }
    const held = await entry;
    if (held.releasing) {
      await held.releasing;
      continue;
    }
    held.users++;
    return held;
  }
}

/** One user lets go; the last one drops the lock (a helper that died has dropped its locks with it). */
async function leave(path: string, held: Held): Promise<void> {
  if (--held.users > 0) return;
  const entry = heldHere.get(path);
  held.releasing = (held.fd === null ? Promise.resolve() : held.holder.drop(held.fd))
    .catch(() => undefined)
    .finally(() => {
      if (heldHere.get(path) === entry) heldHere.delete(path);
    });
  await held.releasing;
}

/** Runs `body` holding the run lock of `output`; throws `RunLockHeldError` at once if another process holds it. */
export async function withRunLock<T>(output: string, body: () => Promise<T>, own = false): Promise<T> {
  const path = await runLockPath(output);
  const held = await enter(path);
  try {
    if (own && held.fd === null) throw new RunLockHeldError(runLockHeld(path));
    return await body();
  } finally {
    await leave(path, held);
  }
}

/**
 * `withRunLock` for a tool that is no part of any run (`reverify omit`): refused also while a
 * `reverify run` drives a run of `output` (a run's own workers may write beside their driver; this
 * tool may not).
 */
export function withOwnRunLock<T>(output: string, body: () => Promise<T>): Promise<T> {
  return withRunLock(output, body, true);
}

/** The run-long hold of the `reverify run` that drives a run. */
export interface RunHold {
  /** The lock file. */
  path: string;
  /** False: another `reverify run` of the same run holds it (this one attached beside it). */
  own: boolean;
  release(): Promise<void>;
}

/**
 * Holds the run lock of `output` until `release()`, with the driver lease that tells the run's
 * workers in other processes that the holder is their driver. Throws `RunLockHeldError` at once if
 * another tool holds the lock.
 */
export async function holdRunLock(output: string): Promise<RunHold> {
  const path = await runLockPath(output);
  const held = await enter(path);
  let lease: number | null = null;
  if (held.fd !== null) {
    const taken = await held.holder.take(driverLeasePath(path)).catch(() => null);
    if (taken && 'fd' in taken) lease = taken.fd;
  }
  let released: Promise<void> | null = null;
  return {
    path,
    own: lease !== null,
    release: () =>
      (released ??= (async () => {
        // The lease goes first: a worker never sees the lease without the run lock behind it.
        if (lease !== null) await held.holder.drop(lease).catch(() => undefined);
        await leave(path, held);
      })()),
  };
}

/**
 * Is the run lock of `output` free right now? Takes and drops it; creates no lock file (without
 * one, nobody can hold it). For the checks before a run starts, which write nothing.
 */
export async function checkRunLockFree(output: string): Promise<void> {
  const path = await runLockPath(output);
  if (!(await exists(path)) || heldHere.has(path)) return;
  await withRunLock(output, () => Promise.resolve());
}

async function takeLock(path: string): Promise<Held> {
  const holder = flockHolder();
  const taken = await holder.take(path).catch((err: Error) => ({ error: err.message }));
  if ('fd' in taken) return { holder, fd: taken.fd, users: 0 };
  if ('held' in taken) {
    if (await driverHolds(holder, path)) return { holder, fd: null, users: 0 };
    throw new RunLockHeldError(runLockHeld(path));
  }
  throw new ConfigError(`cannot take the run lock ${path}: ${taken.error}`);
}

/**
 * Whether the holder of the run lock at `path` is a `reverify run` driving a run: its lease is held
 * (taking it fails). No lease file: no driver ever held it (none is created here).
 */
async function driverHolds(holder: FlockHolder, path: string): Promise<boolean> {
  const lease = driverLeasePath(path);
  if (!(await exists(lease))) return false;
  const taken = await holder.take(lease).catch(() => null);
  if (taken && 'fd' in taken) await holder.drop(taken.fd).catch(() => undefined);
  return taken !== null && 'held' in taken;
}
