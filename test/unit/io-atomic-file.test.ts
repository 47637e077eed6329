import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fsyncDir, publishFile, writeFileAtomic } from '../../src/io/atomic-file.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

/** A fresh empty directory per test, so "no temp file left" is a listing of exactly one name. */
const { freshDir } = useTempRoot('reverify-atomic-');

describe('writeFileAtomic', () => {
  it('writes a string; no temp file is left beside it', async () => {
    const d = freshDir();
    const p = join(d, 'metrics.json');
    await writeFileAtomic(p, '{"ok":"é"}\n');
    expect(readFileSync(p, 'utf8')).toBe('{"ok":"é"}\n');
    expect(readdirSync(d)).toEqual(['metrics.json']);
  });

  it('writes bytes verbatim (Uint8Array, including non-UTF-8 bytes)', async () => {
    const d = freshDir();
    const p = join(d, 'bin');
    const bytes = new Uint8Array([0, 255, 10, 13, 0xc3, 0x28, 7]);
    await writeFileAtomic(p, bytes);
    expect(new Uint8Array(readFileSync(p))).toEqual(bytes);
    expect(readdirSync(d)).toEqual(['bin']);
  });

  it('replaces an existing, longer file completely', async () => {
    const d = freshDir();
    const p = join(d, 'plan.json');
    writeFileSync(p, 'x'.repeat(10_000));
    await writeFileAtomic(p, 'short');
    expect(readFileSync(p, 'utf8')).toBe('short');
    expect(readdirSync(d)).toEqual(['plan.json']);
  });

  it('an empty string gives an empty file', async () => {
    const d = freshDir();
    const p = join(d, 'empty');
    await writeFileAtomic(p, '');
    expect(readFileSync(p, 'utf8')).toBe('');
    expect(readdirSync(d)).toEqual(['empty']);
  });

  it('into a missing directory: rejects and creates nothing', async () => {
    const d = freshDir();
    await expect(writeFileAtomic(join(d, 'nope', 'f.json'), 'x')).rejects.toThrow(/ENOENT/);
    expect(readdirSync(d)).toEqual([]);
  });

  it('sequential writes: the last one wins, nothing else left', async () => {
    const d = freshDir();
    const p = join(d, 'r.json');
    for (let i = 0; i < 5; i++) await writeFileAtomic(p, `v${i}`);
    expect(readFileSync(p, 'utf8')).toBe('v4');
    expect(readdirSync(d)).toEqual(['r.json']);
  });

  it('two concurrent writes of the same path in one process both succeed and leave one whole version', async () => {
    // Activities run concurrently in one worker process (and a worker may run a retried attempt
    // beside a stale one); the workflow bundle cache is written the same way. The temp name must
    // therefore be unique per call, not only per process.
    const d = freshDir();
    const p = join(d, 'same.json');
    const a = 'A'.repeat(200_000);
    const b = 'B'.repeat(100);
    const results = await Promise.allSettled([writeFileAtomic(p, a), writeFileAtomic(p, b)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const got = readFileSync(p, 'utf8');
    expect(got === a || got === b).toBe(true);
    expect(readdirSync(d)).toEqual(['same.json']);
  });
});

describe('publishFile', () => {
  it('moves the file with its content; the source name is gone', async () => {
    const d = freshDir();
    const from = join(d, 'batch-7.main.partial');
    const to = join(d, 'batch-7.main.jsonl');
    writeFileSync(from, '{"r":1}\n{"r":"ñ"}\n');
    await publishFile(from, to);
    expect(readFileSync(to, 'utf8')).toBe('{"r":1}\n{"r":"ñ"}\n');
    expect(existsSync(from)).toBe(false);
    expect(readdirSync(d)).toEqual(['batch-7.main.jsonl']);
  });

  it('replaces an existing target (a retried batch re-publishes its part)', async () => {
    const d = freshDir();
    const from = join(d, 'p.partial');
    const to = join(d, 'p.jsonl');
    writeFileSync(to, 'old old old old\n');
    writeFileSync(from, 'new\n');
    await publishFile(from, to);
    expect(readFileSync(to, 'utf8')).toBe('new\n');
    expect(readdirSync(d)).toEqual(['p.jsonl']);
  });

  it('an empty part publishes as an empty file', async () => {
    const d = freshDir();
    const from = join(d, 'e.partial');
    const to = join(d, 'e.jsonl');
    writeFileSync(from, '');
    await publishFile(from, to);
    expect(readFileSync(to, 'utf8')).toBe('');
    expect(readdirSync(d)).toEqual(['e.jsonl']);
  });

  it('a missing source rejects and leaves the target untouched', async () => {
    const d = freshDir();
    const to = join(d, 't.jsonl');
    writeFileSync(to, 'keep\n');
    await expect(publishFile(join(d, 'missing.partial'), to)).rejects.toThrow(/ENOENT/);
    expect(readFileSync(to, 'utf8')).toBe('keep\n');
    expect(readdirSync(d)).toEqual(['t.jsonl']);
  });

  it('fsyncDir accepts a directory and rejects a missing one', async () => {
    const d = freshDir();
    await expect(fsyncDir(d)).resolves.toBeUndefined();
    await expect(fsyncDir(join(d, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});
