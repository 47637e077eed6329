/**
 * A stand-in for a NeMo Gym collector holding its run lock: a Python process that takes
 * `fcntl.flock(LOCK_EX | LOCK_NB)` on the lock file, as `rollout_recovery.run_lock` does, and holds
 * it until released. The real OS lock, taken the way the collector takes it.
 */
import { spawn, spawnSync } from 'node:child_process';

const HOLD = [
  'import fcntl, sys',
  'f = open(sys.argv[1], "a+b")',
  'fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)',
  'print("held", flush=True)',
  'sys.stdin.read()',
].join('\n');

export interface ForeignLock {
  release: () => Promise<void>;
}

/** Holds the flock on `lockPath` from another process; resolves once it is held. */
export function holdLockElsewhere(lockPath: string): Promise<ForeignLock> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('python3', ['-c', HOLD, lockPath], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    child.once('error', reject);
    child.once('close', (code) => reject(new Error(`the lock holder exited with ${code}`)));
    child.stdout.once('data', () =>
      resolvePromise({
        release: async () => {
          child.stdin.end();
          await exited;
        },
      }),
    );
  });
}

/** Can another process take the flock on `lockPath` right now (non-blocking, as a collector would)? */
export function lockFreeElsewhere(lockPath: string): boolean {
  const probe = 'import fcntl, sys\nf = open(sys.argv[1], "a+b")\nfcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)';
  return spawnSync('python3', ['-c', probe, lockPath]).status === 0;
}
