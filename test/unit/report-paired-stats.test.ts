import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pairedDifferencesOfFiles } from '../../src/report/paired-stats.js';

const row = (t: number, r: number, reward: number, agent: string) =>
  JSON.stringify({ _ng_task_index: t, _ng_rollout_index: r, agent_ref: { name: agent }, reward });

/**
 * Agent a: task 0 (old 0, 1 → new 1, 1), task 1 (old 1, 1 → new 0, 0); agent b: task 1 (0 → 1), task 2 (1 → 1).
 * Hand-computed (Miller's clustered SE, Durkalski's X²) in the comments.
 */
describe('paired statistics from the files of a run', () => {
  it('gives the clustered paired difference and the clustered McNemar test per agent and over all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paired-stats-'));
    const old = join(dir, 'old.jsonl');
    const out = join(dir, 'out.jsonl');
    writeFileSync(
      old,
      [row(0, 0, 0, 'a'), row(0, 1, 1, 'a'), row(1, 0, 1, 'a'), row(1, 1, 1, 'a'), row(1, 2, 0, 'b'), row(2, 0, 1, 'b')].join('\n') + '\n',
    );
    writeFileSync(
      out,
      [row(0, 0, 1, 'a'), row(0, 1, 1, 'a'), row(1, 0, 0, 'a'), row(1, 1, 0, 'a'), row(1, 2, 1, 'b'), row(2, 0, 1, 'b')].join('\n') + '\n',
    );
    const p = await pairedDifferencesOfFiles({ rollouts: old, oldSidecar: null, output: out }, dir);
    const a = p.agents[0];
    expect([a.agent, a.rows, a.tasks, a.oldMean, a.newMean]).toEqual(['a', 4, 2, 0.75, 0.5]);
    // d = (1, 0, −1, −1), mean −0.25; Σr² = 2.75, independent var 2.75/12; task sums of r ±1.5,
    // cross (4.5 − 2.75)/16 = 0.109375; SE = √(0.2291667 + 0.109375) = 0.581843.
    expect(a.delta!.mean).toBeCloseTo(-0.25, 12);
    expect(a.delta!.seIndependent).toBeCloseTo(Math.sqrt(2.75 / 12), 12);
    expect(a.delta!.se).toBeCloseTo(0.581843, 6);
    expect(a.delta!.lo).toBeCloseTo(-0.25 - 1.959964 * 0.581843, 5);
    expect(a.delta!.clusters).toBe(2);
    // Pass/fail: task 0 one 0→1 of 2 (d = −0.5), task 1 two 1→0 of 2 (d = 1): X² = 0.5²/1.25 = 0.2, p = 0.6547.
    expect(a.mcnemar).toMatchObject({ pf: 2, fp: 1, tasks: 2 });
    expect(a.mcnemar.statistic).toBeCloseTo(0.2, 12);
    expect(a.mcnemar.pValue).toBeCloseTo(0.654721, 5);
    // All: d = (1, 0, −1, −1, 1, 0) in tasks (0, 0, 1, 1, 1, 2), mean 0; independent var 4/30; task
    // sums 1, −1, 0: cross (2 − 4)/36; SE = √(0.133333 − 0.055556) = 0.278887. Task 1 is one cluster over both agents.
    expect(p.all.delta!.mean).toBeCloseTo(0, 12);
    expect(p.all.delta!.se).toBeCloseTo(0.278887, 6);
    expect(p.all.delta!.clusters).toBe(3);
    // X²: d = −0.5 (task 0), (2 − 1)/3 (task 1), 0 (task 2): (−1/6)² / (0.25 + 1/9) = 1/13.
    expect(p.all.mcnemar.statistic).toBeCloseTo(1 / 13, 12);
    expect(p.all.passDelta!.mean).toBeCloseTo(0, 12);
    expect(p.confidence).toBe(0.95);
  });
});
