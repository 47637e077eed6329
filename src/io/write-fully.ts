import type { FileHandle } from 'node:fs/promises';
import { withWritePath } from './write-errors.js';

/**
 * Writes all of `data` at `position` (null: at the current position, or at the end for a file
 * opened to append). A full disk (and the like) is a `DiskWriteError` naming `path`, the file the
 * user knows (callers pass the path they opened).
 */
export async function writeFully(fh: FileHandle, data: Uint8Array, position: number | null, path: string): Promise<void> {
  let done = 0;
  try {
    while (done < data.length) {
      const { bytesWritten } = await fh.write(data, done, data.length - done, position === null ? null : position + done);
      done += bytesWritten;
    }
  } catch (err) {
    throw withWritePath(err, path);
  }
}
