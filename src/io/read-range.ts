import type { FileHandle } from 'node:fs/promises';

/** Reads `length` bytes at `offset` as UTF-8 text (a row whose place a plan recorded). */
export async function readRange(fh: FileHandle, offset: number, length: number): Promise<string> {
  return (await readRangeBytes(fh, offset, length)).toString('utf8');
}

/** The file ended before the bytes a plan recorded: it changed while the run was using it. */
export class ShortReadError extends Error {}

/** Reads exactly `length` bytes at `offset` (for copying a line verbatim, byte for byte). */
export async function readRangeBytes(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
    if (bytesRead === 0)
      throw new ShortReadError(`unexpected end of file at byte ${offset + done} (the file changed while the run was using it)`);
    done += bytesRead;
  }
  return buf;
}
