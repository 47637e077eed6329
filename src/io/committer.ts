import { open } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';
import { writingTo } from './write-errors.js';
import { writeFully } from './write-fully.js';

const CHUNK = 8 * 1024 * 1024;

/**
 * Appends part files to an output exactly once. The caller (the workflow) owns `expectedLength`:
 * the length of the output after its last recorded commit. Bytes past it are the remains of a commit
 * that crashed before the workflow recorded it, so they are cut before appending again; a retried
 * commit therefore never duplicates a row. Returns the new length, which the caller records.
 */
export async function commitParts(target: string, expectedLength: number, parts: string[]): Promise<number> {
  const fh = await writingTo(target, () => open(target, 'a+'));
  try {
    const { size } = await fh.stat();
    if (size < expectedLength) {
      throw new ConfigError(
        `${target} is shorter (${size} bytes) than this run has committed (${expectedLength} bytes): ` +
          'another program truncated or replaced it. Restore it, or start over with --overwrite.',
      );
    }
    if (size > expectedLength) await writingTo(target, () => fh.truncate(expectedLength));
    let length = expectedLength;
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (const part of parts) {
      // Streamed in chunks: a part can be large (the seeded successes of a big run).
      const src = await open(part, 'r');
      try {
        for (;;) {
          const { bytesRead } = await src.read(chunk, 0, CHUNK, null);
          if (bytesRead === 0) break;
          // 'a+' appends at the end whatever the position; the truncate above made the end ours.
          await writeFully(fh, chunk.subarray(0, bytesRead), null, target);
          length += bytesRead;
        }
      } finally {
        await src.close();
      }
    }
    await writingTo(target, () => fh.sync());
    return length;
  } finally {
    await fh.close();
  }
}
