import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRange } from '../../src/io/read-range.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-read-range-');

describe('readRange', () => {
  it('reads exactly length bytes at offset, decoding multi-byte UTF-8', async () => {
    const d = freshDir();
    const p = join(d, 'f.jsonl');
    const lines = ['{"a":1}', '{"t":"日本語😀"}', '{"z":"ü"}'];
    writeFileSync(p, `${lines.join('\n')}\n`);
    const fh = await open(p, 'r');
    try {
      let off = 0;
      for (const line of lines) {
        const len = Buffer.byteLength(line);
        expect(await readRange(fh, off, len)).toBe(line);
        off += len + 1;
      }
      // out of order reads work too (positional reads, no shared cursor)
      expect(await readRange(fh, 0, 7)).toBe(lines[0]);
      expect(await readRange(fh, 8 + Buffer.byteLength(lines[1]) + 1, Buffer.byteLength(lines[2]))).toBe(lines[2]);
    } finally {
      await fh.close();
    }
  });

  it('length 0 gives the empty string', async () => {
    const d = freshDir();
    const p = join(d, 'f');
    writeFileSync(p, 'abc');
    const fh = await open(p, 'r');
    try {
      expect(await readRange(fh, 1, 0)).toBe('');
    } finally {
      await fh.close();
    }
  });

  it('a range larger than one read (3 MiB) comes back whole', async () => {
    const d = freshDir();
    const p = join(d, 'big');
    const body = 'x'.repeat(3 << 20);
    writeFileSync(p, `head\n${body}\ntail`);
    const fh = await open(p, 'r');
    try {
      const got = await readRange(fh, 5, body.length);
      expect(got.length).toBe(body.length);
      expect(got === body).toBe(true);
    } finally {
      await fh.close();
    }
  });

  it('a range past the end of the file throws, naming the byte where the file ended', async () => {
    const d = freshDir();
    const p = join(d, 'short');
    writeFileSync(p, '0123456789');
    const fh = await open(p, 'r');
    try {
      await expect(readRange(fh, 6, 10)).rejects.toThrow('unexpected end of file at byte 10');
      await expect(readRange(fh, 20, 1)).rejects.toThrow('unexpected end of file at byte 20');
    } finally {
      await fh.close();
    }
  });
});
