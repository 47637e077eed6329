import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRanges } from '../../src/io/read-ranges.js';

describe('readRanges', () => {
  it('returns each range in the order asked, near and far apart, multi-byte text included', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ranges-')), 'f.jsonl');
    const lines = Array.from({ length: 3000 }, (_, i) => `{"i":${i},"t":"é${'x'.repeat(i % 97)}"}`);
    const far = 'y'.repeat(9 * 1024 * 1024); // forces a second window
    writeFileSync(path, lines.slice(0, 1500).join('\n') + '\n' + far + '\n' + lines.slice(1500).join('\n') + '\n');
    const places: Array<{ offset: number; length: number; text: string }> = [];
    let offset = 0;
    for (const [k, l] of [...lines.slice(0, 1500), far, ...lines.slice(1500)].entries()) {
      const length = Buffer.byteLength(l);
      if (k !== 1500) places.push({ offset, length, text: l });
      offset += length + 1;
    }
    const pick = [places[2999 - 1], places[0], places[1700], places[5], places[1499], places[1500]];
    expect(await readRanges(path, pick)).toEqual(pick.map((p) => p.text));
    expect(await readRanges(path, places)).toEqual(places.map((p) => p.text));
    expect(await readRanges(path, [])).toEqual([]);
  });
});
