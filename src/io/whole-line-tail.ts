import { open, type FileHandle } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';

/**
 * Makes a reused output end with a whole line before anything is appended: a last line that is
 * complete JSON but lacks its `\n` gets one; a cut-off one is cut when the user asked for it (the
 * plan phase has already stopped the run otherwise). Returns a message when something was changed.
 */
export async function endWithWholeLine(path: string, repair: boolean): Promise<string | null> {
  const fh = await open(path, 'r+');
  try {
    const { size } = await fh.stat();
    if (size === 0) return null;
    const tailLen = Math.min(size, 1 << 20);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    if (tail[tailLen - 1] === 10) return null;
    const nl = tail.lastIndexOf(10);
    let start = nl >= 0 ? size - tailLen + nl + 1 : 0;
    if (nl < 0 && size > tailLen) {
      // The last line is longer than the tail window: find its start by scanning back.
      start = await lastLineStart(fh, size);
    }
    const last = Buffer.alloc(size - start);
    await fh.read(last, 0, last.length, start);
    try {
      JSON.parse(last.toString('utf8'));
      await fh.write(Buffer.from('\n'), 0, 1, size);
      await fh.sync();
      return null;
    } catch {
      if (!repair) throw new ConfigError(`${path}: the last line is cut off; delete it, or pass --repair-truncated to cut it`);
      await fh.truncate(start);
      await fh.sync();
      return `Cut the partial last line of ${path} (${size - start} bytes; --repair-truncated)`;
    }
  } finally {
    await fh.close();
  }
}

async function lastLineStart(fh: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(1 << 20);
  for (let end = size; end > 0;) {
    const from = Math.max(0, end - chunk.length);
    await fh.read(chunk, 0, end - from, from);
    const nl = chunk.subarray(0, end - from).lastIndexOf(10);
    if (nl >= 0) return from + nl + 1;
    end = from;
  }
  return 0;
}
