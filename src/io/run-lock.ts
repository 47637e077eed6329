/**
 * The run lock of newer NeMo Gym (`rollout_recovery.run_lock`): an exclusive, non-blocking
 * `flock(2)` on `<resolved output stem>_run.lock` beside the output, never unlinked. A NeMo Gym
 * collector holds it across its whole run; reverify holds it for every step that writes the
 * outputs, so the two never write one run at once.
 *
 * Node has no `flock` in core, and no npm package offers one with prebuilt binaries (`fs-ext`
 * compiles with node-gyp at install). So the lock is held by a child process: util-linux's
 * `flock --nonblock FILE cat`, whose stdin is a pipe from this process. `flock` takes the lock on
 * its own open file description, then runs `cat`; `cat` echoes the byte we write, which proves the
 * lock is ours. Closing the pipe ends `cat`, then `flock`, and the kernel drops the lock; if this
 * process dies (even SIGKILL), the kernel closes the pipe and the same happens: no stale owner.
 * It is the same kernel lock Python's `fcntl.flock` takes, so a NeMo Gym collector sees it.
 *
 * Within one process the lock is shared (counted): two steps of one run never conflict with
 * each other, only with another process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ConfigError } from '../contract/errors.js';
import { runLockHeld } from '../contract/managed-run.js';
import { runLockFilePath } from '../contract/file-names.js';
import { exists } from './file-exists.js';
import { resolvePath } from './resolve-path.js';

/** `flock`'s exit status when the lock is held elsewhere (EX_TEMPFAIL, as NeMo Gym's incomplete-run code). */
const HELD_EXIT = 75;

/** Raised when another process holds the run lock; its message is NeMo Gym's. */
export class RunLockHeldError extends ConfigError {}

/** `<resolved output stem>_run.lock`: symlinks resolved as Python's `Path.resolve()` does. */
export async function runLockPath(output: string): Promise<string> {
  return runLockFilePath(await resolvePath(output));
}

interface Held {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<void>;
  users: number;
  /** Set when the last user let go: the lock is dropped once `flock` has exited. */
  releasing?: Promise<void>;
}

const heldHere = new Map<string, Promise<Held>>();

/**
 * This process's hold on the lock at `path`: shared while held; a step arriving while the last
 * one lets go waits for `flock` to exit and takes the lock anew (never a conflict with ourselves).
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
      held.child.stdin.end();
      held.releasing = held.exited.then(() => {
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

function takeLock(path: string): Promise<Held> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('flock', ['--nonblock', '--conflict-exit-code', String(HELD_EXIT), path, 'cat'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let acquired = false;
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => {
      acquired = true;
      resolvePromise({ child, exited, users: 0 });
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      const what = err.code === 'ENOENT' ? '`flock` (util-linux) is not on PATH: install util-linux' : err.message;
      reject(new ConfigError(`cannot take the run lock ${path}: ${what}`));
    });
    child.once('close', (code) => {
      if (acquired) return;
      if (code === HELD_EXIT) reject(new RunLockHeldError(runLockHeld(path)));
      else reject(new ConfigError(`cannot take the run lock ${path}: ${stderr.trim() || `flock exited with ${code}`}`));
    });
    child.stdin.on('error', () => undefined); // flock refused before reading: its exit says why
    child.stdin.write('L');
  });
}
