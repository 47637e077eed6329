/**
 * Reading an ATIF trajectory file (ours: NeMo Gym 0.7.0 reads whatever the path names). Only a
 * regular file of at most `MAX_TRAJECTORY_BYTES` is read: a device (`/dev/zero`) would grow the
 * process without end and a FIFO would hang the plan. The file is opened non-blocking (a FIFO
 * without a writer does not block the open), then checked on its descriptor before any byte is read.
 */
import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** The largest trajectory read: 256 MiB (real ones are a few MiB at most). */
export const MAX_TRAJECTORY_BYTES = 256 * 1024 * 1024;

/** A trajectory path that is not a regular file of at most the cap; the message says what it is. */
export class TrajectoryFileRefused extends Error {}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The refusal of a file of this kind and size, or null when it may be read. */
export function trajectoryFileProblem(st: Stats, cap = MAX_TRAJECTORY_BYTES): string | null {
  if (!st.isFile()) return `is ${kindOf(st)}, not a regular file: point the manifest entry at a trajectory JSON file`;
  if (st.size > cap) return `is ${st.size} bytes, over the ${cap}-byte limit of a trajectory (${cap / 1024 / 1024} MiB)`;
  return null;
}

/** The bytes of the trajectory at `path` (at most its size when opened); throws `TrajectoryFileRefused`. */
export async function readTrajectoryFile(path: string): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    const problem = trajectoryFileProblem(st);
    if (problem !== null) throw new TrajectoryFileRefused(problem);
    const bytes = Buffer.alloc(st.size);
    let read = 0;
    while (read < bytes.length) {
      const { bytesRead } = await fh.read(bytes, read, bytes.length - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return bytes.subarray(0, read);
  } finally {
    await fh.close();
  }
}
