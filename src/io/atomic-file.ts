import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writingTo } from './write-errors.js';

/** fsyncs a directory so that a rename inside it survives a machine crash. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

let tmpCounter = 0;

/**
 * Writes `data` to `path` atomically: temp file, fsync, rename, fsync of the directory. A full
 * disk (and the like) is a `DiskWriteError` naming `path`.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  // Unique per call: concurrent writers of one path in one process must not share a temp file.
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  return writingTo(path, async () => {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
    await fsyncDir(dirname(path));
  });
}

/** Renames `from` to `to` after fsyncing `from`; then fsyncs the directory. Disk errors name `to`. */
export function publishFile(from: string, to: string): Promise<void> {
  return writingTo(to, async () => {
    const fh = await open(from, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(from, to);
    await fsyncDir(dirname(to));
  });
}
