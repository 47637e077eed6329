/**
 * RecordFileWriter: records go out a whole buffer at a time and all of them reach the file (a short
 * write goes on where it stopped); `close` writes the rest; errors name the file.
 */
import { readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RecordFileWriter } from '../../src/io/record-file-writer.js';
import { DiskWriteError } from '../../src/io/write-errors.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-record-writer-');

/** Records of 3 bytes: `i`, `i + 1`, `i + 2` (mod 256). */
const RECORD = 3;
const encode = (i: number, buf: Buffer, at: number): void => {
  for (let k = 0; k < RECORD; k++) buf[at + k] = (i + k) % 256;
};
const expected = (n: number) => Buffer.from(Array.from({ length: n * RECORD }, (_, j) => (Math.floor(j / RECORD) + (j % RECORD)) % 256));

/** Adds records 0..n-1, awaiting each write; the indexes of the adds that wrote the buffer out. */
async function addAll(w: RecordFileWriter, n: number): Promise<number[]> {
  const wrote: number[] = [];
  for (let i = 0; i < n; i++) {
    const writing = w.add(i, encode);
    if (writing) {
      wrote.push(i);
      await writing;
    }
  }
  return wrote;
}

/** `fh` with `over` in place of its own `write` or `sync` (all a RecordFileWriter calls). */
function handle(fh: FileHandle, over: Partial<Pick<FileHandle, 'write' | 'sync'>>): FileHandle {
  const used: Pick<FileHandle, 'write' | 'sync' | 'close'> = {
    write: fh.write.bind(fh),
    sync: () => fh.sync(),
    close: () => fh.close(),
    ...over,
  };
  return used as FileHandle;
}

/** `fh`, whose writes write at most `most` bytes each, as a full disk or a signal may leave them. */
function shortWrites(fh: FileHandle, most: number): FileHandle {
  const write = (buf: Uint8Array, offset: number, length: number, position: number | null) =>
    fh.write(buf, offset, Math.min(length, most), position);
  return handle(fh, { write: write as FileHandle['write'] });
}

describe('RecordFileWriter', () => {
  it('several small records: nothing is written until close, which writes them all', async () => {
    const path = join(freshDir(), 'small.bin');
    const w = await RecordFileWriter.create(path, RECORD, 8);
    expect(await addAll(w, 5)).toEqual([]);
    expect(statSync(path).size).toBe(0);
    await w.close();
    expect(w.count).toBe(5);
    expect(readFileSync(path)).toEqual(expected(5));
  });

  it('more records than the buffer holds: each full buffer is written out, the rest by close', async () => {
    const path = join(freshDir(), 'big.bin');
    const w = await RecordFileWriter.create(path, RECORD, 4);
    expect(await addAll(w, 10)).toEqual([3, 7]);
    expect(statSync(path).size).toBe(8 * RECORD);
    await w.close();
    expect(readFileSync(path)).toEqual(expected(10));
  });

  it('addBytes appends the record at an offset as is, after encoded ones', async () => {
    const path = join(freshDir(), 'bytes.bin');
    const w = await RecordFileWriter.create(path, RECORD, 2);
    await addAll(w, 1);
    await w.addBytes(Buffer.from([9, 9, 7, 8, 9, 9]), 2);
    await w.close();
    expect(readFileSync(path)).toEqual(Buffer.from([0, 1, 2, 7, 8, 9]));
  });

  it('create empties an existing file', async () => {
    const path = join(freshDir(), 'old.bin');
    writeFileSync(path, 'x'.repeat(100));
    const w = await RecordFileWriter.create(path, RECORD, 4);
    await addAll(w, 2);
    await w.close();
    expect(readFileSync(path)).toEqual(expected(2));
  });

  it('short writes: every byte still reaches the file', async () => {
    const path = join(freshDir(), 'short.bin');
    const w = new RecordFileWriter(shortWrites(await open(path, 'w'), 2), path, RECORD, 5);
    await addAll(w, 12);
    await w.close();
    expect(readFileSync(path)).toEqual(expected(12));
  });

  it('a path that cannot be opened is named in the error', async () => {
    const d = freshDir();
    writeFileSync(join(d, 'file'), '');
    const path = join(d, 'file', 'plan.bin');
    const err = await RecordFileWriter.create(path, RECORD, 4).catch((e: unknown) => e);
    expect((err as Error).message).toContain(path);
  });

  it('a failed fsync is a DiskWriteError naming the path', async () => {
    const path = join(freshDir(), 'ro.bin');
    const fh = await open(path, 'w');
    const readOnly = handle(fh, {
      sync: () => Promise.reject(Object.assign(new Error('EROFS: read-only file system, fsync'), { code: 'EROFS' })),
    });
    const w = new RecordFileWriter(readOnly, path, RECORD, 4);
    const err = await w.close().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiskWriteError);
    expect((err as Error).message).toContain(`cannot write '${path}': read-only file system (EROFS)`);
  });

  it('a full disk is a DiskWriteError naming the path, from add and from close', async () => {
    const d = freshDir();
    const path = join(d, 'plan.bin');
    symlinkSync('/dev/full', path);
    const full = `cannot write '${path}': no space left on device (ENOSPC)`;
    const w = await RecordFileWriter.create(path, RECORD, 2);
    expect(w.add(0, encode)).toBeUndefined();
    const fromAdd = await w.add(1, encode)?.catch((e: unknown) => e);
    expect(fromAdd).toBeInstanceOf(DiskWriteError);
    expect((fromAdd as Error).message).toContain(full);
    const fromClose = await w.close().catch((e: unknown) => e);
    expect(fromClose).toBeInstanceOf(DiskWriteError);
    expect((fromClose as Error).message).toContain(full);
  });
});
