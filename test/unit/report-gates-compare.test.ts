/**
 * The report's numbers for `--fail-if` (src/report/gate-numbers.ts) and `reverify compare`
 * (src/report/output-comparison.ts), from small files with hand-computed values.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportGateLookup } from '../../src/report/gate-numbers.js';
import { compareOutputs } from '../../src/report/output-comparison.js';
import { joinVerdicts } from '../../src/report/verdict-join.js';
import { ConfigError } from '../../src/contract/errors.js';

const row = (t: number, r: number, reward: number, agent: string) =>
  JSON.stringify({ _ng_task_index: t, _ng_rollout_index: r, agent_ref: { name: agent }, reward });

/** Agent a: task 0 (old 0, 1 → new 1, 1), task 1 (old 1, 1 → new 0, 0); agent b: task 1 (0 → 1), task 2 (1 → 1). */
function files(): { dir: string; old: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'report-gates-'));
  const old = join(dir, 'old.jsonl');
  const out = join(dir, 'out.jsonl');
  const rows = (rewards: number[]) =>
    [
      row(0, 0, rewards[0], 'a'),
      row(0, 1, rewards[1], 'a'),
      row(1, 0, rewards[2], 'a'),
      row(1, 1, rewards[3], 'a'),
      row(1, 2, rewards[4], 'b'),
      row(2, 0, rewards[5], 'b'),
    ].join('\n') + '\n';
  writeFileSync(old, rows([0, 1, 1, 1, 0, 1]));
  writeFileSync(out, rows([1, 1, 0, 0, 1, 1]));
  return { dir, old, out };
}

describe("the report's numbers for --fail-if", () => {
  it('delta, new, old and flip rates per agent and over all, with task-clustered intervals', async () => {
    const f = files();
    const lookup = reportGateLookup(await joinVerdicts({ rollouts: f.old, oldSidecar: null, output: f.out }, f.dir), 0.95);
    const a = lookup('a', 'delta');
    if (a.value === null) throw new Error(a.why);
    // Hand-computed in report-paired-stats.test.ts: mean −0.25, clustered SE 0.581843.
    expect(a.value.estimate).toBeCloseTo(-0.25, 12);
    expect(a.value.hi).toBeCloseTo(-0.25 + 1.959964 * 0.581843, 5);
    expect(a.basis).toBe('95% task-clustered interval, 4 paired rows in 2 tasks');
    // New rewards of a: (1, 1, 0, 0), tasks (0, 0, 1, 1): mean 0.5, r = ±0.5, Σr² = 1 → independent var 1/12;
    // task sums ±1: cross (2 − 1)/16; SE = √(1/12 + 1/16) = 0.381881.
    const n = lookup('a', 'new').value!;
    expect(n.estimate).toBeCloseTo(0.5, 12);
    expect(n.hi - n.estimate).toBeCloseTo(1.959964 * 0.381881, 5);
    expect(lookup('a', 'old').value!.estimate).toBeCloseTo(0.75, 12);
    // Flips over all: 0→1 at rows 0 and 4 (2 of 6), 1→0 at rows 2, 3 (2 of 6).
    expect(lookup('all', 'flips-up').value!.estimate).toBeCloseTo(2 / 6, 12);
    expect(lookup('all', 'flips-down').value!.estimate).toBeCloseTo(2 / 6, 12);
    expect(lookup('b', 'flips-down').value!.estimate).toBe(0);
    expect(lookup('c', 'delta')).toEqual({ value: null, why: "the output has no agent 'c'" });
  });
});

describe('reverify compare', () => {
  it('gives, per pair B − A, the paired delta per agent with agreement, and keys not in both', async () => {
    const f = files();
    const third = join(f.dir, 'third.jsonl');
    writeFileSync(third, [row(0, 0, 1, 'a'), row(0, 1, 1, 'a'), row(9, 0, 1, 'a')].join('\n') + '\n');
    const c = await compareOutputs([f.old, f.out, third], f.dir, 0.9);
    expect(c.pairs.map((p) => [p.a, p.b])).toEqual([
      [f.old, f.out],
      [f.old, third],
      [f.out, third],
    ]);
    const [ab, ac] = c.pairs;
    expect(ab.all.delta!.mean).toBeCloseTo(0, 12);
    expect(ab.agents.map((x) => [x.agent, x.rows, x.oldMean, x.newMean])).toEqual([
      ['a', 4, 0.75, 0.5],
      ['b', 2, 0.5, 1],
    ]);
    expect(ab.all.passTable).toEqual({ pp: 2, pf: 2, fp: 2, ff: 0 });
    // κ: po = 2/6, both pass rates 4/6, pe = 16/36 + 4/36 = 20/36: (12/36 − 20/36)/(16/36) = −0.5.
    expect(ab.all.kappa).toBeCloseTo(-0.5, 12);
    expect([ab.paired, ab.onlyA, ab.onlyB]).toEqual([6, 0, 0]);
    expect([ac.paired, ac.onlyA, ac.onlyB]).toEqual([2, 4, 1]);
    expect(c.confidence).toBe(0.9);
  });

  it('refuses outputs that share no key, and fewer than two outputs', async () => {
    const f = files();
    const other = join(f.dir, 'other.jsonl');
    writeFileSync(other, row(50, 0, 1, 'a') + '\n');
    await expect(compareOutputs([f.out, other], f.dir, 0.95)).rejects.toThrow(
      /share no rollout key \(_ng_task_index, _ng_rollout_index\) with a reward in both: compare outputs re-scored from the same rollouts/,
    );
    await expect(compareOutputs([f.out], f.dir, 0.95)).rejects.toBeInstanceOf(ConfigError);
    await expect(compareOutputs([f.out, f.out], f.dir, 0.95)).rejects.toThrow(/is given twice/);
  });
});
