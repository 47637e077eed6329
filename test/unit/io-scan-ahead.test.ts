/**
 * The plan's second scanning thread: for every read it takes, its results are exactly what the
 * caller's own scan gives (vouched or not, member spans, checksums), on lines of every kind and
 * across reads; and when it cannot help (no file, a read that does not match) the caller is told to
 * scan itself, never handed wrong results.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemberNames } from '../../src/contract/json-line-scan.js';
import { jsonlLineChunks, type LineChunk } from '../../src/io/jsonl-lines.js';
import { digestNums, lineDigest } from '../../src/io/line-digest.js';
import { ScanAhead } from '../../src/io/scan-ahead.js';
import { forEachScannedLine, isVouchedObject, ScannedLine } from '../../src/io/scanned-lines.js';
import { FastSourceRows } from '../../src/planning/fast-rows.js';
import { successLine } from '../helpers/spec-fixtures.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-scan-ahead-');

/** A row with a `pad` member of n bytes first. */
function padded(line: string, n: number): string {
  return `{"pad":"${'x'.repeat(n)}",${line.slice(1)}`;
}

/** About 14 MiB over four reads: rows, bad JSON, invalid UTF-8, CRLF, blank lines, a 5 MiB line, no final newline. */
function mixedFile(): string {
  const parts: Buffer[] = [];
  for (let t = 0; t < 1800; t++) {
    const row = padded(successLine({ t }), 4000 + (t % 7) * 300);
    if (t % 97 === 5) parts.push(Buffer.from('{"_ng_task_index": 1, "oops"\n'));
    else if (t % 101 === 7)
      parts.push(Buffer.concat([Buffer.from(row.slice(0, 40)), Buffer.from([0xc3, 0x28]), Buffer.from(row.slice(40) + '\n')]));
    else if (t % 89 === 3) parts.push(Buffer.from(row + '\r\n'));
    else if (t % 83 === 2) parts.push(Buffer.from('\n'));
    else parts.push(Buffer.from(row + '\n'));
    if (t === 900) parts.push(Buffer.from(padded(successLine({ t: 90000 }), 5 << 20) + '\n'));
  }
  parts.push(Buffer.from(successLine({ t: 99999 })));
  const path = tmp.unique('mixed', '.jsonl');
  writeFileSync(path, Buffer.concat(parts));
  return path;
}

describe('ScanAhead', () => {
  it.each([
    { threads: 1, callerScans: true, theirs: (i: number) => i % 2 === 1 },
    { threads: 2, callerScans: false, theirs: () => true },
    { threads: 2, callerScans: true, theirs: (i: number) => i % 3 !== 0 },
  ])("gives, for the threads' reads ($threads, caller scans: $callerScans), the caller's own scan of each line", async (share) => {
    const path = mixedFile();
    const names = new MemberNames(FastSourceRows.names);
    const slots = names.slots();
    const width = slots.length;
    const ahead = ScanAhead.start(path, FastSourceRows.names, 1, { digests: true, minBytes: 0, ...share })!;
    let reads = 0;
    let fromThread = 0;
    let vouched = 0;
    try {
      for await (const chunk of jsonlLineChunks(path)) {
        const read = await ahead.take(chunk);
        expect(read !== null).toBe(share.theirs(reads++));
        if (read === null) continue;
        fromThread++;
        expect(read.count).toBe(chunk.count);
        for (let k = 0; k < chunk.count; k++) {
          const mine = isVouchedObject(chunk.data, chunk.start[k], chunk.end[k], names, slots);
          expect(read.vouched[k] === 1).toBe(mine);
          if (!mine) continue;
          vouched++;
          expect([...read.slots.subarray(k * width, (k + 1) * width)]).toEqual([...slots]);
          const digest = lineDigest(chunk.data.subarray(chunk.start[k], chunk.end[k]));
          expect([read.digests[2 * k], read.digests[2 * k + 1]]).toEqual(digestNums(digest));
        }
      }
    } finally {
      ahead.close();
    }
    expect(reads).toBeGreaterThanOrEqual(4);
    expect(fromThread).toBeGreaterThanOrEqual(2);
    expect(vouched).toBeGreaterThan(100);
  });

  it('gives forEachScannedLine the same lines with the thread as without', async () => {
    const path = mixedFile();
    const names = new MemberNames(FastSourceRows.names);
    const seen: string[] = [];
    const visit = (line: ScannedLine) => {
      seen.push(line.vouched ? `${line.raw(0)} ${line.raw(1)} ${line.raw(2)?.length}` : '-');
    };
    await forEachScannedLine(path, names, visit, { minBytes: 0 });
    const here: string[] = [];
    const line = new ScannedLine(names);
    for await (const chunk of jsonlLineChunks(path)) {
      for (let k = 0; k < chunk.count; k++) {
        line.at(chunk, k);
        here.push(line.vouched ? `${line.raw(0)} ${line.raw(1)} ${line.raw(2)?.length}` : '-');
      }
    }
    expect(seen).toEqual(here);
    expect(here.filter((l) => l !== '-').length).toBeGreaterThan(1500);
  });

  it('is not started for a file below the size given', () => {
    expect(ScanAhead.start('/nonexistent', FastSourceRows.names, 10, { minBytes: 11 })).toBeNull();
  });

  it('tells the caller to scan itself when the thread cannot read the file', async () => {
    const ahead = ScanAhead.start(tmp.unique('missing', '.jsonl'), FastSourceRows.names, 1, { minBytes: 0 })!;
    const chunk = { offset: 0, count: 1 } as LineChunk;
    try {
      expect(await ahead.take(chunk)).toBeNull(); // the caller's read
      expect(await ahead.take(chunk)).toBeNull(); // the thread's: it failed
    } finally {
      ahead.close();
    }
  });

  it('gives nothing for a read that does not match, nor for any read after it', async () => {
    const path = mixedFile();
    const ahead = ScanAhead.start(path, FastSourceRows.names, 1, { digests: true, minBytes: 0 })!;
    try {
      const reads: Array<{ offset: number; count: number }> = [];
      for await (const chunk of jsonlLineChunks(path)) reads.push({ offset: chunk.offset, count: chunk.count });
      expect(await ahead.take(reads[0] as LineChunk)).toBeNull();
      expect(await ahead.take({ ...reads[1], count: reads[1].count - 1 } as LineChunk)).toBeNull();
      expect(await ahead.take(reads[2] as LineChunk)).toBeNull();
      expect(await ahead.take(reads[3] as LineChunk)).toBeNull();
    } finally {
      ahead.close();
    }
  });
});
