import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskRank } from '../../src/planning/task-order.js';
import { estimateHistoryOf } from '../../src/report/estimate-history.js';
import { replayOnThread } from '../../src/report/estimate-history-offthread.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { joinVerdicts } from '../../src/report/verdict-join.js';

const f64 = (xs: number[]) => Float64Array.from(xs);

describe('the live estimate replayed in the plan order', () => {
  // One agent, three tasks of two rows: task 0 goes 0,0 → 1,1 (Δ +1), task 1 1,1 → 1,0 (Δ −0.5),
  // task 2 0,0 → 0,0 (Δ 0). Plan places: task 1 first, then 2, then 0. Δ over the 6 rows: (2 − 1)/6.
  const join1 = {
    agents: [
      {
        agent: 'a',
        oldRewards: f64([0, 0, 1, 1, 0, 0]),
        newRewards: f64([1, 1, 1, 0, 0, 0]),
        taskIds: f64([0, 0, 1, 1, 2, 2]),
      },
    ],
    taskOrder: f64([2, 0, 1]),
    order: { kind: 'file' as const },
  };

  it('feeds the tasks in plan order, one step a batch, and ends at the exact delta', () => {
    const h = estimateHistoryOf(join1, 0.9, 3)!;
    expect([h.units, h.rows, h.confidence]).toEqual([3, 6, 0.9]);
    expect(h.points.map((p) => [p.rows, p.units])).toEqual([
      [2, 1],
      [4, 2],
      [6, 3],
    ]);
    const last = h.points[2].all!;
    expect(last.estimate).toBeCloseTo(1 / 6, 12);
    expect([last.lo, last.hi].map((x) => x.toFixed(12))).toEqual([(1 / 6).toFixed(12), (1 / 6).toFixed(12)]);
    expect(h.points[2].perAgent.a).toEqual(h.points[2].all);
    // Every interval holds the final value, and each is inside the one before (the sequence only narrows).
    for (const [i, p] of h.points.entries()) {
      expect(p.all!.lo).toBeLessThanOrEqual(1 / 6 + 1e-12);
      expect(p.all!.hi).toBeGreaterThanOrEqual(1 / 6 - 1e-12);
      if (i > 0) expect(p.all!.hi - p.all!.lo).toBeLessThanOrEqual(h.points[i - 1].all!.hi - h.points[i - 1].all!.lo + 1e-12);
    }
  });

  it('takes the order from the places: the first step holds the first-placed task', () => {
    // After one step of one task (task 1, Δ −0.5, still open): the interval's sure range is bounded by
    // that task at the worst of [−1, 1] and the two unseen tasks anywhere in [−1, 1]: [−1, 1]. After two,
    // task 1 is in (−0.5), task 2 open in [−1, 1], task 0 unseen: no tighter than [−2.5/3, 1.5/3].
    const h = estimateHistoryOf(join1, 0.9, 3)!;
    expect(h.points[1].all!.lo).toBeGreaterThanOrEqual(-2.5 / 3 - 1e-12);
    expect(h.points[1].all!.hi).toBeLessThanOrEqual(1.5 / 3 + 1e-12);
    const reversed = estimateHistoryOf({ ...join1, taskOrder: f64([0, 1, 2]) }, 0.9, 3)!;
    // Task 0 first (Δ +1, in), task 1 open, task 2 unseen: the sure range after two is [(1 − 2)/3, (1 + 2)/3].
    expect(reversed.points[1].all!.lo).toBeGreaterThanOrEqual(-1 / 3 - 1e-12);
    expect(h.points[1].all!.lo).toBeLessThan(-1 / 3);
    expect(reversed.points[2].all!.estimate).toBeCloseTo(1 / 6, 12);
  });

  it('is null without paired rows, and a reward outside [0, 1] turns it off for its agent', () => {
    expect(estimateHistoryOf({ ...join1, agents: [] }, 0.95)).toBeNull();
    const off = estimateHistoryOf({ ...join1, agents: [{ ...join1.agents[0], newRewards: f64([1, 1, 1, 0, 0, 2]) }] }, 0.95)!;
    expect(off.points.at(-1)!.all).toBeNull();
  });

  it("places each task by the planner's rank under the run's seed (--order random)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'estimate-history-'));
    const row = (t: unknown, r: number, reward: number) => JSON.stringify({ _ng_task_index: t, _ng_rollout_index: r, reward });
    const lines = [row(3, 0, 1), row(3, 1, 0), row(10, 0, 1), row('x"y', 0, 0)];
    writeFileSync(join(dir, 'old.jsonl'), lines.join('\n') + '\n');
    writeFileSync(join(dir, 'out.jsonl'), lines.join('\n') + '\n');
    const files = { rollouts: join(dir, 'old.jsonl'), oldSidecar: null, output: join(dir, 'out.jsonl') };
    const j = await joinVerdicts(files, dir, { order: { kind: 'random', seed: 42 } });
    // Key order: 3, 10, then the string task, whose part id is `s` + its text, JSON-escaped in a key id (task-order.ts: taskOfKeyId).
    expect(Array.from(j.taskOrder)).toEqual([taskRank(42, '3'), taskRank(42, '10'), taskRank(42, 'sx\\"y')]);
    expect(Array.from(j.agents[0].taskIds)).toEqual([0, 0, 1, 2]);
    const byFile = await joinVerdicts(files, dir);
    expect(byFile.order).toEqual({ kind: 'file' });
  });

  it('gives the very same history on its own thread, reading the columns in shared memory, and fed in chunks', async () => {
    const r = mulberry32(11);
    const tasks = 5000;
    const agents = ['a', 'b'].map((agent) => {
      const ids = Array.from({ length: tasks * 3 }, (_, i) => Math.floor(i / 3)).filter(() => r() < 0.8);
      const shared = (xs: number[]) => {
        const out = new Float64Array(new SharedArrayBuffer(xs.length * 8));
        out.set(xs);
        return out;
      };
      return {
        agent,
        taskIds: shared(ids),
        oldRewards: shared(ids.map(() => Math.round(r()))),
        newRewards: shared(ids.map(() => Math.round(r()))),
      };
    });
    const join = { agents, taskOrder: f64(Array.from({ length: tasks }, () => Math.floor(r() * 100))), order: { kind: 'file' as const } };
    const here = estimateHistoryOf(join, 0.95)!;
    expect(here.points).toHaveLength(100);
    expect(await replayOnThread(join, 0.95)).toEqual({ history: here });
    // ≈ 8,000 units in 4 steps of ≈ 2,000: a step fed as one batch, or as several of at most 1,024 or 7 units, alike.
    const whole = estimateHistoryOf(join, 0.95, 4, Infinity)!;
    expect(whole.units).toBeGreaterThan(4 * 1024);
    expect(estimateHistoryOf(join, 0.95, 4)).toEqual(whole);
    expect(estimateHistoryOf(join, 0.95, 4, 7)).toEqual(whole);
    expect(here.points[99].all!.estimate).toBeCloseTo(here.points[99].all!.lo, 12);
  });
});
