/**
 * `--noise-sample N` end to end (real Temporal dev server, real reference server): N rows this run
 * scored are judged a second time into `<stem>_noise.jsonl`; the output is the byte-for-byte output
 * of the same run without the sample; the noise floor the run reports is the one the two files give.
 * Flips are planted: the reference server flags the first grading of chosen rows as an invalid
 * verdict (reward 0), so their second grading is their true grade.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRows, runReverify as run, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { endSummary } from '../../src/cli/end-summary.js';
import { noiseFromFiles } from '../../src/report/noise-files.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('noise-sample');
/** Rows of even tasks: their first grading is an invalid verdict (reward 0), every later one their true grade. */
const planted = Array.from({ length: 10 }, (_, t) => (t % 2 === 0 ? [`${t}:0@1`, `${t}:1@1`] : [])).flat();
const rsNoise = useReferenceServer({ port: 0, seed: 2, invalidJudge: planted });
const rsPlain = useReferenceServer({ port: 0, seed: 2, invalidJudge: planted });

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
const pass = (x: number) => x >= 0.5;

describe('--noise-sample', () => {
  it('re-judges N seeded rows into the noise file, leaves the output byte for byte, and reports the κ of the two files', async () => {
    const common = { concurrency: 1, batchSize: 50 };
    const a = await sampleRun(tempDir(), rsNoise().port, { tasks: 10, repeats: 2 });
    const noisy = await run({
      inputs: a.inputsPath,
      rollouts: a.rolloutsPath,
      output: a.output,
      configs: [a.config],
      ...common,
      noiseSample: 12,
      orderSeed: 5,
    });
    expect(noisy.error).toBeNull();
    const b = await sampleRun(tempDir(), rsPlain().port, { tasks: 10, repeats: 2 });
    const plain = await run({ inputs: b.inputsPath, rollouts: b.rolloutsPath, output: b.output, configs: [b.config], ...common });
    expect(plain.error).toBeNull();
    // The same rows judged the same way: the output of the run with a sample is that of the run without.
    expect(readFileSync(a.output)).toEqual(readFileSync(b.output));
    expect(noisy.result!.done).toBe(20);

    const noisePath = join(a.output, '..', 'out_noise.jsonl');
    const noise = readRows(noisePath);
    expect(noise).toHaveLength(12);
    const first = new Map(readRows(a.output).map((r) => [keyOf(r), Number(r.reward)]));
    expect(new Set(noise.map(keyOf)).size).toBe(12);
    // The 2×2 table of pass/fail, by hand.
    const t = { pp: 0, pf: 0, fp: 0, ff: 0, abs: 0 };
    for (const r of noise) {
      const [x, y] = [first.get(keyOf(r))!, Number(r.reward)];
      t.abs += Math.abs(y - x);
      if (pass(x) && pass(y)) t.pp++;
      else if (pass(x)) t.pf++;
      else if (pass(y)) t.fp++;
      else t.ff++;
    }
    // Only planted rows can flip, and only up; some did.
    expect(t.pf).toBe(0);
    expect(t.fp).toBeGreaterThan(0);
    const po = (t.pp + t.ff) / 12;
    const [p1, p2] = [(t.pp + t.pf) / 12, (t.pp + t.fp) / 12];
    const pe = p1 * p2 + (1 - p1) * (1 - p2);
    const floor = noisy.result!.noise!.floor!;
    expect(floor).toMatchObject({ sampled: 12, n: 12, bothPass: t.pp, passFail: t.pf, failPass: t.fp, bothFail: t.ff });
    expect(floor.kappa).toBeCloseTo((po - pe) / (1 - pe), 12);
    expect(floor.flipRate).toBeCloseTo(t.fp / 12, 12);
    expect(floor.meanAbsDelta).toBeCloseTo(t.abs / 12, 12);
    expect(noisy.result!.noise).toMatchObject({ requested: 12, seed: 5, sampled: 12, path: noisePath });
    expect(noisy.lines).toContain('Noise sample: 12 scored row(s) judged again at the end (seed 5)');
    expect(noisy.lines.some((l) => l.startsWith('Judge noise: judge noise floor (N=12): flip rate'))).toBe(true);
    // `reverify status --json` of the ended run (its end summary) carries it too.
    expect(endSummary(noisy.result!, 'id', null).noise!.floor).toEqual(floor);
    // The report reads the same floor from the two files.
    const { path: _path, ...fromFiles } = (await noiseFromFiles(a.output))!;
    expect(fromFiles).toEqual(floor);
    expect(readFileSync(join(a.output, '..', 'out_report.html'), 'utf8')).toContain(`"noise":{"sampled":12,"n":12,`);
  });

  it('counts in the request budget: with too few requests left the sample is cut short and the output is complete', async () => {
    const a = await sampleRun(tempDir(), rsPlain().port, { tasks: 10, repeats: 2 });
    const files = { inputs: a.inputsPath, rollouts: a.rolloutsPath, output: a.output, configs: [a.config] };
    // 20 rows take 20 requests; 3 are left for a sample of 12.
    const r = await run({ ...files, concurrency: 1, batchSize: 50, noiseSample: 12, orderSeed: 5, maxRequests: 23 });
    expect(r.error).toBeNull();
    expect(r.result!.done).toBe(20);
    expect(r.result!.noise).toMatchObject({ requested: 12, sampled: 0 });
    expect(r.result!.messages).toContain('Noise sample cut short: the request budget is spent (0 of 12 row(s) re-judged)');
  });
});
