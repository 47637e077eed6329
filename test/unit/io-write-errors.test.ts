/**
 * A full disk names the file that could not be written. `/dev/full` is a real full device on Linux:
 * every write to it fails with ENOSPC. Errors that retrying cannot fix fail an activity at once.
 */
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { commitParts } from '../../src/io/committer.js';
import { writeFully } from '../../src/io/write-fully.js';
import { DiskWriteError, nonTransientFsError } from '../../src/io/write-errors.js';
import { writeFileAtomic } from '../../src/io/atomic-file.js';
import { failFastOnFsError } from '../../activities/user-errors.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-write-errors-');

const FIX = 'free space, then run the same command again (a live run retries by itself)';

describe.skipIf(!existsSync('/dev/full'))('ENOSPC names the path', () => {
  it('writeFully through a handle: the path its caller opened (here a symlink to the full device)', async () => {
    const path = join(freshDir(), 'part.jsonl');
    symlinkSync('/dev/full', path);
    const fh = await open(path, 'w');
    try {
      const err = await writeFully(fh, Buffer.from('{"row":1}\n'), null, path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DiskWriteError);
      expect((err as Error).message).toBe(`cannot write '${path}': no space left on device (ENOSPC); ${FIX}`);
    } finally {
      await fh.close();
    }
  });

  it('commitParts: the output as the run names it (here a symlink to the full device)', async () => {
    const d = freshDir();
    const part = join(d, 'b0.part');
    writeFileSync(part, '{"row":1}\n');
    const output = join(d, 'out.jsonl');
    symlinkSync('/dev/full', output);
    const err = await commitParts(output, 0, [part]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiskWriteError);
    expect((err as Error).message).toBe(`cannot write '${output}': no space left on device (ENOSPC); ${FIX}`);
    // A command that stops on it (`reverify aggregate`) prints that line as is.
    expect(describeFailure(err)).toEqual({ line: `Error: ${(err as Error).message}`, code: 2 });
  });
});

describe('a file-system error that retrying cannot fix fails the activity at once (issue 34 item 2)', () => {
  const failing = (body: () => Promise<unknown>) => failFastOnFsError(body)().catch((e: unknown) => e);

  it('ENAMETOOLONG: a non-retryable FileSystemError naming the path; the CLI prints `Error: …`, exit 1', async () => {
    const path = join(freshDir(), `${'a'.repeat(300)}.json`);
    const err = await failing(() => writeFileAtomic(path, '{}'));
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).type).toBe('FileSystemError');
    const tmp = `${path}.tmp-${process.pid}-`;
    expect((err as Error).message).toMatch(
      new RegExp(`^cannot open '${tmp}\\d+': name too long \\(ENAMETOOLONG\\); retrying cannot fix it: choose a shorter --output name$`),
    );
    expect(describeFailure(err)).toEqual({ line: `Error: ${(err as Error).message}`, code: 1 });
  });

  it('ENOTDIR (a file where a directory should be) and EISDIR (a directory where a file should be)', async () => {
    const d = freshDir();
    writeFileSync(join(d, 'file'), '');
    const notDir = await failing(() => mkdir(join(d, 'file', 'work'), { recursive: true }));
    expect((notDir as ApplicationFailure).type).toBe('FileSystemError');
    expect((notDir as Error).message).toMatch(
      /^cannot mkdir '.*\/file\/work': a part of the path is a file, not a directory \(ENOTDIR\); retrying cannot fix it: move that file or choose another --output, then run the same command with --resume$/,
    );
    const isDir = await failing(() => open(d, 'w'));
    expect((isDir as ApplicationFailure).type).toBe('FileSystemError');
    expect((isDir as Error).message).toMatch(/^cannot open '.*': it is a directory \(EISDIR\); retrying cannot fix it/);
  });

  it('a permission error wrapped as DiskWriteError is terminal too; a full disk and other errors are left as they are', () => {
    expect(nonTransientFsError(new DiskWriteError('/d/out.jsonl', 'EROFS'))).toBe(
      "cannot write '/d/out.jsonl': read-only file system (EROFS); retrying cannot fix it: make it writable or choose another --output, then run the same command with --resume",
    );
    expect(nonTransientFsError(new DiskWriteError('/d/out.jsonl', 'ENOSPC'))).toBeNull();
    expect(nonTransientFsError(Object.assign(new Error('x'), { code: 'ECONNRESET', syscall: 'read' }))).toBeNull();
    // No path: not a file's error (an EPERM of a signal, say).
    expect(nonTransientFsError(Object.assign(new Error('x'), { code: 'EPERM', syscall: 'kill' }))).toBeNull();
  });
});
