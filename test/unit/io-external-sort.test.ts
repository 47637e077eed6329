import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExternalSorter, groupsOf } from '../../src/io/external-sort.js';
import { MERGE_READ_BYTES, readBufferBytes } from '../../src/io/sort-run-files.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../../src/planning/keyed-records.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-sort-');

function records(n: number, seed: number): KeyedRecord[] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => ({
    key: `["${Math.floor((r() * n) / 3)}","é${Math.floor(r() * 4)}"]`,
    nums: [Math.floor(r() * 3), 2 ** 40 + i],
    text: r() < 0.1 ? `message ${i} ✓` : null,
  }));
}

async function sortAll(recs: KeyedRecord[], dir: string, maxRecords: number): Promise<KeyedRecord[]> {
  const s = new ExternalSorter({ dir, name: 'test', compare: compareKeyedRecords, codec: keyedRecordCodec, maxRecords });
  for (const r of recs) await s.add(r);
  const out: KeyedRecord[] = [];
  for await (const r of s.sorted()) out.push(r);
  return out;
}

describe('ExternalSorter', () => {
  it.each([
    ['5,000 records in memory', 5_000, 10_000],
    ['5,000 records, one run per 97 (one merge of 52 runs)', 5_000, 97],
    ['300 records, one per run (merges in levels of 256)', 300, 1],
  ])('sorts like Array.sort: %s', async (_label, n, maxRecords) => {
    const recs = records(n, 7);
    const dir = tmp.freshDir();
    const out = await sortAll(recs, dir, maxRecords);
    expect(out).toEqual([...recs].sort(compareKeyedRecords));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('is stable: equal records come out in the order they were added, across runs', async () => {
    const recs = Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i % 7}`, nums: [0], text: String(i) }));
    const out = await sortAll(recs, tmp.freshDir(), 33);
    const expected = [...recs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    expect(out.map((r) => r.text)).toEqual(expected.map((r) => r.text));
  });

  it('keeps a record larger than its I/O buffer whole', async () => {
    const big = { key: 'b', nums: [1], text: 'x'.repeat(3 << 20) };
    const recs = [{ key: 'c', nums: [0], text: null }, big, { key: 'a', nums: [2], text: 'y' }];
    const out = await sortAll(recs, tmp.freshDir(), 1);
    expect(out.map((r) => r.key)).toEqual(['a', 'b', 'c']);
    expect(out[1].text).toBe(big.text);
  });

  it('reads a merge of many runs within one budget, not a 1 MiB buffer per run', async () => {
    const s = new ExternalSorter({
      dir: tmp.freshDir(),
      name: 'test',
      compare: compareKeyedRecords,
      codec: keyedRecordCodec,
      maxRecords: 1,
    });
    for (const r of records(256, 3)) await s.add(r);
    const before = process.memoryUsage().arrayBuffers;
    let held: number | undefined;
    for await (const r of s.sorted()) {
      // Every reader of the one merge of 256 runs is open while the first record comes out:
      // 256 MiB with a 1 MiB buffer each, the budget with shares of it.
      held ??= process.memoryUsage().arrayBuffers - before;
      expect(r.key).not.toBe('');
    }
    expect(held).toBeLessThan(4 * MERGE_READ_BYTES);
    expect(readBufferBytes(64) * 64).toBe(MERGE_READ_BYTES);
    expect(readBufferBytes(1)).toBe(1 << 20);
  });

  it('sorts nothing into nothing', async () => {
    expect(await sortAll([], tmp.freshDir(), 5)).toEqual([]);
  });
});

describe('groupsOf', () => {
  it('groups consecutive records with equal ids', async () => {
    async function* src() {
      yield* ['a1', 'a2', 'b1', 'c1', 'c2', 'c3'];
    }
    const groups: string[][] = [];
    for await (const g of groupsOf(src(), (s) => s[0])) groups.push(g);
    expect(groups).toEqual([['a1', 'a2'], ['b1'], ['c1', 'c2', 'c3']]);
  });
});
