import type { FileHandle } from 'node:fs/promises';

/** Writes all of `data` at `position` (null: at the end, for a file opened to append). */
export async function writeFully(fh: FileHandle, data: Uint8Array, position: number | null): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position === null ? null : position + done);
    done += bytesWritten;
  }
}
