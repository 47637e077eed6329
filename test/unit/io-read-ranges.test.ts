import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { lineDigest } from '../../src/io/line-digest.js';
import { ChangedRangeError, readRanges } from '../../src/io/read-ranges.js';
import { forgeCrc32 } from '../helpers/forge-crc32.js';

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

  it('ranges with a digest are proven: a changed byte or a range past the end is a ChangedRangeError naming the range', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ranges-')), 'f.jsonl');
    const lines = ['{"a":1}', '{"b":22}', '{"c":333}'];
    writeFileSync(path, lines.join('\n') + '\n');
    let offset = 0;
    const ranges = lines.map((l) => {
      const r = { offset, length: l.length, digest: lineDigest(Buffer.from(l)) };
      offset += l.length + 1;
      return r;
    });
    expect(await readRanges(path, ranges)).toEqual(lines);
    writeFileSync(path, ['{"a":1}', '{"b":23}', '{"c":333}'].join('\n') + '\n');
    const changed = await readRanges(path, [ranges[2], ranges[1], ranges[0]]).catch((e: unknown) => e);
    expect(changed).toBeInstanceOf(ChangedRangeError);
    expect((changed as ChangedRangeError).index).toBe(1);
    expect(await readRanges(path, [{ ...ranges[1], digest: undefined }])).toEqual(['{"b":23}']); // no digest: not checked
    writeFileSync(path, lines.join('\n').slice(0, 12));
    const short = await readRanges(path, [ranges[0], ranges[2]]).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(ChangedRangeError);
    expect((short as ChangedRangeError).index).toBe(1);
  });

  it("a line replaced by another key's line of the same length and the same CRC-32 (padding forged) is caught", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ranges-')), 'f.jsonl');
    const pad = ' '.repeat(48);
    const lines = [`{"_ng_task_index":1,"response":"mine"}${pad}`, `{"_ng_task_index":2,"response":"your"}${pad}`];
    writeFileSync(path, lines.join('\n') + '\n');
    const first = Buffer.from(lines[0]);
    const forged = forgeCrc32(Buffer.from(lines[1].trimEnd()), first.length, crc32(first));
    expect(crc32(forged)).toBe(crc32(first)); // a CRC-32 proof would take it for the planned line
    writeFileSync(path, Buffer.concat([forged, Buffer.from('\n' + lines[1] + '\n')]));
    const range = { offset: 0, length: first.length, digest: lineDigest(first) };
    const err = await readRanges(path, [range]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChangedRangeError);
  });
});
