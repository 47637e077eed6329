/**
 * The live estimate (src/stats/run-estimate.ts) runs in the workflow, in Temporal's sandbox: a `vm`
 * context, where every read of a global goes through Node's context interceptor (~100 times slower
 * than a module constant). Feeding units must not read `Math` per unit: a commit that releases a
 * backlog of 31,000 units took seconds that way, past the worker's isolate timeout under load
 * (bench/README.md). Here the code runs, bundled, in a `vm` context that counts its reads of `Math`.
 */
import { join } from 'node:path';
import vm from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { PairedUnit } from '../../src/contract/batch-result.js';
import type * as RunEstimate from '../../src/stats/run-estimate.js';

const BATCHES = 20;
const PER_BATCH = 100;

/** run-estimate.ts as a script in a fresh context, and how many times it has read `Math`. */
async function loadInSandbox(): Promise<{ stats: typeof RunEstimate; mathReads: () => number }> {
  const out = await build({
    entryPoints: [join(import.meta.dirname, '..', '..', 'src', 'stats', 'run-estimate.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'stats',
    platform: 'neutral',
    logLevel: 'silent',
  });
  let reads = 0;
  const sandbox: Record<string, unknown> = {};
  Object.defineProperty(sandbox, 'Math', {
    get: () => {
      reads++;
      return Math;
    },
  });
  const context = vm.createContext(sandbox);
  vm.runInContext(out.outputFiles[0].text, context);
  return { stats: context.stats as typeof RunEstimate, mathReads: () => reads };
}

/** Batch `b`'s units: one row per task, two agents, some flips. */
function units(b: number): PairedUnit[] {
  return Array.from({ length: PER_BATCH }, (_, i) => {
    const n = b * PER_BATCH + i;
    const old = n % 3 === 0 ? 1 : 0;
    const now = n % 7 === 0 ? 1 - old : old;
    return {
      agent: n % 2 ? 'a' : 'b',
      task: String(n),
      rows: 1,
      known: 1,
      oldSum: old,
      newSum: now,
      up: now > old ? 1 : 0,
      down: now < old ? 1 : 0,
      invalid: 0,
    };
  });
}

describe('live estimate in the workflow sandbox', () => {
  it('reads no global per unit fed: a backlog of batches entered at one commit reads Math at most once per batch', async () => {
    const { stats, mathReads } = await loadInSandbox();
    const half = (BATCHES * PER_BATCH) / 2;
    const planned = { units: half, rows: half, maxRows: 1, oldSum: 0, invalid: 0 };
    const e = stats.createRunEstimate({ a: planned, b: planned }, BATCHES * PER_BATCH, 0.95);
    const before = mathReads();
    // Batch 0 commits last: its commit enters every batch's units at once (the backlog).
    for (let b = 1; b < BATCHES; b++) stats.feedBatch(e, b, units(b));
    stats.feedBatch(e, 0, units(0));
    expect(e.rowsFed).toBe(BATCHES * PER_BATCH);
    expect(e.all.est.newMean.pending).toBe(0);
    expect(mathReads() - before).toBeLessThanOrEqual(BATCHES);
  });
});
