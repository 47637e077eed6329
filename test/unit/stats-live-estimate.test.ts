import { describe, expect, it } from 'vitest';
import { Mulberry32 } from '../../src/reference-server/prng.js';
import { addTask, createLiveEstimate, liveIntervals, taskRanges, updateTask, type TaskRows } from '../../src/stats/live-estimate.js';

/** A task of `olds.length` binary rollouts, the first `known` of which have their new reward. */
function rowsOf(olds: number[], news: number[], known: number): TaskRows {
  let [newSum, up, down] = [0, 0, 0];
  for (let i = 0; i < known; i++) {
    newSum += news[i];
    if (olds[i] === 0 && news[i] === 1) up++;
    if (olds[i] === 1 && news[i] === 0) down++;
  }
  return { rows: olds.length, known, oldSum: olds.reduce((a, b) => a + b, 0), newSum, up, down };
}

describe("one agent's live paired estimate (four without-replacement confidence sequences)", () => {
  it("a task's ranges: points when every row is known, every reward the missing rows may get otherwise", () => {
    const whole = taskRanges(rowsOf([1, 0, 0, 1], [1, 1, 0, 0], 4));
    expect(whole).toEqual({
      newMean: { lo: 0.5, hi: 0.5 },
      delta: { lo: 0, hi: 0 },
      up: { lo: 0.25, hi: 0.25 },
      down: { lo: 0.25, hi: 0.25 },
    });
    const part = taskRanges(rowsOf([1, 0, 0, 1], [1, 1, 0, 0], 2));
    expect(part).toEqual({
      newMean: { lo: 0.5, hi: 1 },
      delta: { lo: 0, hi: 0.5 },
      up: { lo: 0.25, hi: 0.75 },
      down: { lo: 0, hi: 0.5 },
    });
    expect(() => taskRanges({ rows: 2, known: 3, oldSum: 0, newSum: 0, up: 0, down: 0 })).toThrow(/cannot have 3 known/);
  });

  it('ends at the exact means when every task is in, with judge failures narrowed and then resolved on the way', () => {
    const r = new Mulberry32(31);
    const tasks = Array.from({ length: 50 }, () => {
      const olds = Array.from({ length: 4 }, (): number => (r.next() < 0.5 ? 1 : 0));
      const news = olds.map((o) => (r.next() < 0.15 ? 1 - o : o));
      return { olds, news };
    });
    const est = createLiveEstimate(tasks.length, 0.05);
    const later: { tokens: NonNullable<ReturnType<typeof addTask>>; olds: number[]; news: number[] }[] = [];
    tasks.forEach(({ olds, news }, i) => {
      const known = i % 5 === 0 ? 1 : 4; // every fifth task: three judge failures
      const tokens = addTask(est, rowsOf(olds, news, known));
      if (tokens) later.push({ tokens: updateTask(est, tokens, rowsOf(olds, news, 3))!, olds, news });
    });
    expect(liveIntervals(est).delta.pending).toBe(10);
    const saved = JSON.parse(JSON.stringify({ est, later })) as { est: typeof est; later: typeof later };
    for (const p of saved.later) expect(updateTask(saved.est, p.tokens, rowsOf(p.olds, p.news, 4))).toBeNull();
    const iv = liveIntervals(saved.est);
    const rows = tasks.length * 4;
    const sum = (f: (o: number, n: number) => number) =>
      tasks.reduce((a, t) => a + t.olds.reduce((b, o, i) => b + f(o, t.news[i]), 0), 0) / rows;
    expect(iv.newMean.lo).toBeCloseTo(
      sum((_, n) => n),
      12,
    );
    expect(iv.delta.hi).toBeCloseTo(
      sum((o, n) => n - o),
      12,
    );
    expect(iv.up.lo).toBeCloseTo(
      sum((o, n) => (o === 0 && n === 1 ? 1 : 0)),
      12,
    );
    expect(iv.down.hi).toBeCloseTo(
      sum((o, n) => (o === 1 && n === 0 ? 1 : 0)),
      12,
    );
    expect(iv.delta).toMatchObject({ pending: 0, added: 50, of: 50 });
  });

  it('rewards on another range: the delta spans [a − b, b − a]', () => {
    const est = createLiveEstimate(3, 0.05, 0, 10);
    expect([est.delta.lower, est.delta.upper, est.newMean.upper]).toEqual([-10, 10, 10]);
  });
});
