/**
 * The run lock of newer NeMo Gym (`rollout_recovery.run_lock`): an exclusive, non-blocking
 * `flock(2)` on `<resolved output stem>_run.lock` beside the output, never unlinked. A NeMo Gym
 * collector holds it across its whole run; reverify holds it for every step that writes the
 * outputs, so the two never write one run at once.
 *
 * Node has no `flock` in core, and no npm package offers one with prebuilt binaries (`fs-ext`
 * compiles with node-gyp at install). So the lock is taken by util-linux's `flock` on a descriptor
 * of one long-lived helper process (flock-holder.ts), which holds it until we drop it, or until
 * this process dies (even SIGKILL): then the helper exits and the kernel drops the lock, no stale
 * owner. It is the same kernel lock Python's `fcntl.flock` takes, so a NeMo Gym collector sees it.
 *
 * Within one process the lock is shared (counted): two steps of one run never conflict with
 * each other, only with another process.
 */
import { ConfigError } from '../contract/errors.js';
import { runLockHeld } from '../contract/managed-run.js';
import { runLockFilePath } from '../contract/file-names.js';
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
  /** The helper that holds the lock, and its descriptor that does. */
  holder: FlockHolder;
  fd: number;
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

/** Runs `body` holding the run lock of `output`; throws `RunLockHeldError` at once if another process holds it. */
export async function withRunLock<T>(output: string, body: () => Promise<T>): Promise<T> {
  const path = await runLockPath(output);
  const held = await enter(path);
  try {
    return await body();
  } finally {
    if (--held.users === 0) {
      const entry = heldHere.get(path);
      // A helper that died has dropped its locks with it: nothing left to drop.
      held.releasing = held.holder
        .drop(held.fd)
        .catch(() => undefined)
        .finally(() => {
          if (heldHere.get(path) === entry) heldHere.delete(path);
        });
      await held.releasing;
    }
  }
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
  if ('held' in taken) throw new RunLockHeldError(runLockHeld(path));
  throw new ConfigError(`cannot take the run lock ${path}: ${taken.error}`);
}
