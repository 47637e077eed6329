import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { driverLeasePath } from '../../src/contract/file-names.js';
import { checkRunLockFree, holdRunLock, RunLockHeldError, runLockPath, withRunLock } from '../../src/io/run-lock.js';
import { holdLockElsewhere, lockFreeElsewhere } from '../helpers/foreign-lock.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-run-lock-');

describe('run lock (flock on <resolved output stem>_run.lock)', () => {
  it('is named for the output stem, beside the resolved output (a symlinked output locks its target)', async () => {
    const d = freshDir();
    mkdirSync(join(d, 'real'));
    writeFileSync(join(d, 'real', 'run.jsonl'), '');
    symlinkSync(join(d, 'real', 'run.jsonl'), join(d, 'latest.jsonl'));
    expect(await runLockPath(join(d, 'out.jsonl'))).toBe(join(d, 'out_run.lock'));
    expect(await runLockPath(join(d, 'latest.jsonl'))).toBe(join(d, 'real', 'run_run.lock'));
  });

  it('two names of one output share one lock, also before the output exists (a dangling symlink, a symlinked directory)', async () => {
    const d = freshDir();
    mkdirSync(join(d, 'real'));
    symlinkSync(join(d, 'real', 'run.jsonl'), join(d, 'next.jsonl'));
    symlinkSync(join(d, 'real'), join(d, 'alias'));
    const lock = join(d, 'real', 'run_run.lock');
    expect(await runLockPath(join(d, 'next.jsonl'))).toBe(lock);
    expect(await runLockPath(join(d, 'alias', 'run.jsonl'))).toBe(lock);
    expect(await runLockPath(join(d, 'alias', 'sub', 'run.jsonl'))).toBe(join(d, 'real', 'sub', 'run_run.lock'));
  });

  it('is held while the body runs, seen by a Python fcntl.flock, released after; the file stays', async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const seen = await withRunLock(out, async () => lockFreeElsewhere(lock));
    expect(seen).toBe(false);
    expect(lockFreeElsewhere(lock)).toBe(true);
    expect(existsSync(lock)).toBe(true);
  });

  it('is shared by nested and concurrent steps of one process', async () => {
    const out = join(freshDir(), 'out.jsonl');
    const inner = await withRunLock(out, () => Promise.all([withRunLock(out, async () => 1), withRunLock(out, async () => 2)]));
    expect(inner).toEqual([1, 2]);
  });

  it("held by another process (a collector's fcntl.flock): refused at once with NeMo Gym's line; the body never runs", async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const holder = await holdLockElsewhere(lock);
    let ran = false;
    try {
      const err = await withRunLock(out, async () => (ran = true)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunLockHeldError);
      expect((err as Error).message).toBe(`Another collector owns this run (${lock}). Wait for it to stop before resuming.`);
      await expect(checkRunLockFree(out)).rejects.toBeInstanceOf(RunLockHeldError);
    } finally {
      await holder.release();
    }
    expect(ran).toBe(false);
    await expect(withRunLock(out, async () => 'ok')).resolves.toBe('ok');
  });

  it('the pre-start check creates no lock file when there is none', async () => {
    const out = join(freshDir(), 'out.jsonl');
    await checkRunLockFree(out);
    expect(existsSync(await runLockPath(out))).toBe(false);
  });
});

/** A `reverify run` driving a run in another process: it holds the run lock of `out` until killed. */
async function driverElsewhere(out: string) {
  const code = `import { holdRunLock } from ${JSON.stringify(new URL('../../src/io/run-lock.ts', import.meta.url).pathname)};
const hold = await holdRunLock(${JSON.stringify(out)}); console.log(hold.own ? 'held' : 'not own'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (c) => reject(new Error(`the driver exited with ${c}`)));
  });
  expect(said).toBe('held');
  return {
    kill: async () => {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

describe('run lock held for the whole run by the driver (issue 31 item 4)', () => {
  it("refuses a collector's fcntl.flock until released, between steps too; the steps of its own process share it", async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const hold = await holdRunLock(out);
    expect(hold.own).toBe(true);
    expect(lockFreeElsewhere(lock)).toBe(false);
    expect(lockFreeElsewhere(driverLeasePath(lock))).toBe(false);
    // The in-process worker's steps: no second flock of our own (which would conflict), no release after them.
    for (let i = 0; i < 3; i++) expect(await withRunLock(out, async () => lockFreeElsewhere(lock))).toBe(false);
    expect(lockFreeElsewhere(lock)).toBe(false);
    await hold.release();
    expect(lockFreeElsewhere(lock)).toBe(true);
    expect(lockFreeElsewhere(driverLeasePath(lock))).toBe(true);
  });

  it("a collector holding the lock: the driver's hold is refused with NeMo Gym's line", async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const holder = await holdLockElsewhere(lock);
    try {
      const err = await holdRunLock(out).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunLockHeldError);
      expect((err as Error).message).toBe(`Another collector owns this run (${lock}). Wait for it to stop before resuming.`);
    } finally {
      await holder.release();
    }
  });

  it("a worker in another process writes under its driver's hold; a lock held without the driver lease is a collector's: refused", async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const driver = await driverElsewhere(out);
    try {
      // This process is the worker: its step runs while the driver still holds the lock.
      expect(await withRunLock(out, async () => lockFreeElsewhere(lock))).toBe(false);
      await checkRunLockFree(out);
    } finally {
      await driver.kill();
    }
    expect(lockFreeElsewhere(lock)).toBe(true);
    const collector = await holdLockElsewhere(lock);
    try {
      await expect(withRunLock(out, async () => 1)).rejects.toBeInstanceOf(RunLockHeldError);
    } finally {
      await collector.release();
    }
    // Without a lease file nobody ever drove the run: refused, and no lease file is made.
    const other = join(freshDir(), 'out.jsonl');
    const otherLock = await runLockPath(other);
    const collector2 = await holdLockElsewhere(otherLock);
    try {
      await expect(withRunLock(other, async () => 1)).rejects.toBeInstanceOf(RunLockHeldError);
      expect(existsSync(driverLeasePath(otherLock))).toBe(false);
    } finally {
      await collector2.release();
    }
  });
});

describe('run lock, one step right after another in one process', () => {
  it('a step starting while the previous one lets go waits for the release, then takes the lock (no conflict with ourselves)', async () => {
    const out = join(freshDir(), 'out.jsonl');
    for (let i = 0; i < 5; i++) {
      let next: Promise<string> | undefined;
      const first = await withRunLock(out, async () => {
        // Runs just after this body returns, while its `flock` is still exiting.
        setImmediate(() => {
          next = withRunLock(out, async () => 'next');
        });
        return 'first';
      });
      expect(first).toBe('first');
      await new Promise((r) => setImmediate(r));
      await expect(next).resolves.toBe('next');
    }
  });
});

describe('run lock, the helper that holds it', () => {
  it('a lock file whose path has spaces, quotes, a line break and non-ASCII: taken at that exact path, released after', async () => {
    const dir = join(freshDir(), `it's "odd"\n dir é`);
    mkdirSync(dir);
    const out = join(dir, 'out.jsonl');
    const lock = await runLockPath(out);
    expect(await withRunLock(out, async () => lockFreeElsewhere(lock))).toBe(false);
    expect(existsSync(lock)).toBe(true);
    expect(lockFreeElsewhere(lock)).toBe(true);
  });

  it('a lock file that cannot be created: one ConfigError naming it, and the next lock still works', async () => {
    const out = join(freshDir(), 'missing-dir', 'out.jsonl');
    const err = await withRunLock(out, async () => 1).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(RunLockHeldError);
    expect((err as Error).message).toMatch(/^cannot take the run lock .*missing-dir\/out_run\.lock: /);
    await expect(withRunLock(join(freshDir(), 'out.jsonl'), async () => 2)).resolves.toBe(2);
  });

  it('the helper killed while a step holds the lock: the lock is free, the step ends normally, the next one takes a new helper', async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const value = await withRunLock(out, async () => {
      const helpers = execFileSync('pgrep', ['-P', String(process.pid), '-x', 'bash'], { encoding: 'utf8' })
        .trim()
        .split('\n');
      expect(helpers).toHaveLength(1);
      process.kill(Number(helpers[0]), 'SIGKILL');
      for (let i = 0; i < 50 && !lockFreeElsewhere(lock); i++) await new Promise((r) => setTimeout(r, 50));
      expect(lockFreeElsewhere(lock)).toBe(true);
      return 'done';
    });
    expect(value).toBe('done');
    expect(await withRunLock(out, async () => lockFreeElsewhere(lock))).toBe(false);
  });

  it('a process killed (SIGKILL) while it holds the lock leaves it free', async () => {
    const out = join(freshDir(), 'out.jsonl');
    const lock = await runLockPath(out);
    const code = `import { withRunLock } from ${JSON.stringify(new URL('../../src/io/run-lock.ts', import.meta.url).pathname)};
await withRunLock(${JSON.stringify(out)}, () => { console.log('held'); return new Promise(() => setInterval(() => {}, 1000)); });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', (c) => reject(new Error(`the holder exited with ${c}`)));
    });
    expect(lockFreeElsewhere(lock)).toBe(false);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    let free = false;
    for (let i = 0; i < 50 && !free; i++) {
      free = lockFreeElsewhere(lock);
      if (!free) await new Promise((r) => setTimeout(r, 100));
    }
    expect(free).toBe(true);
  });
});
