import { open } from 'node:fs/promises';

const CHUNK = 1 << 20;

/** Python's `bytes.strip()` whitespace: space, \t, \n, \v, \f, \r. */
function isStripped(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * The rows of a JSONL file in its first `length` bytes: the lines that are not blank (what NeMo Gym
 * counts as results when it reads the main output back). One pass with a fixed buffer.
 */
export async function countRows(path: string, length: number): Promise<number> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let rows = 0;
    let filled = false; // the current line has a non-blank byte
    for (let pos = 0; pos < length;) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, length - pos), pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const c = buf[i];
        if (c === 0x0a) {
          if (filled) rows++;
          filled = false;
        } else if (!filled && !isStripped(c)) filled = true;
      }
      pos += bytesRead;
    }
    return filled ? rows + 1 : rows;
  } finally {
    await fh.close();
  }
}
