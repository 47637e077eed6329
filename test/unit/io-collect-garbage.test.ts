import { getHeapStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/io/collect-garbage.js';

describe('collectGarbage', () => {
  it('frees objects that outlived the young generation, and leaves no `gc` in new contexts', () => {
    // 400,000 small objects kept across many scavenges (promoted), then dropped.
    let kept: { n: number; s: string }[] | null = [];
    for (let i = 0; i < 400_000; i++) kept.push({ n: i, s: `row ${i}` });
    for (let round = 0; round < 20; round++) new Array(200_000).fill(round).map((x: number) => ({ x }));
    expect(kept.length).toBe(400_000);
    kept = null;
    const before = getHeapStatistics().used_heap_size;
    collectGarbage();
    const after = getHeapStatistics().used_heap_size;
    expect(before - after).toBeGreaterThan(16 * 2 ** 20);
    // The flag that exposes the collector is set only while it is taken.
    expect(runInNewContext('typeof gc')).toBe('undefined');
    collectGarbage(); // taken once, callable again
  });
});
