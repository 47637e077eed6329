import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { ClusterRuns } from '../../src/stats/cluster-runs.js';
import { clusteredMean, clusteredMeanOfRuns, type PairedPart } from '../../src/stats/clustered.js';
import { clusteredMcNemar, clusteredMcNemarOfRuns, taskFlipsOf } from '../../src/stats/mcnemar-clustered.js';

const runsOf = (parts: number[][]) => {
  const runs = new ClusterRuns(parts);
  const seen: [number, number[], number[]][] = [];
  while (runs.next()) seen.push([runs.id, [...runs.from], [...runs.to]]);
  return seen;
};

/** `agents` parts of seeded paired rows, task ids non-decreasing in each (as the verdict join's agents), tasks shared between parts. */
function seededParts(seed: number, agents: number, binary: boolean): PairedPart[] {
  const r = mulberry32(seed);
  return Array.from({ length: agents }, () => {
    const tasks: number[] = [];
    for (let t = 0; t < 60; t++) if (r() < 0.7) for (let k = Math.floor(r() * 4); k >= 0; k--) tasks.push(t);
    const value = () => (binary ? Math.round(r()) : r());
    return { oldValues: tasks.map(value), newValues: tasks.map(value), clusters: tasks };
  });
}

const concat = (parts: PairedPart[], pick: (p: PairedPart) => ArrayLike<number>) => parts.flatMap((p) => Array.from(pick(p)));
const diff = (o: number, n: number) => n - o;
const passes = (x: number) => x >= 0.5;

describe('clusters read as runs of parts whose ids do not decrease', () => {
  it('visits each cluster once, in ascending id, with its run in every part', () => {
    expect(runsOf([[0, 0, 2, 5], [1, 2, 2], []])).toEqual([
      [0, [0, 0, 0], [2, 0, 0]],
      [1, [2, 0, 0], [2, 1, 0]],
      [2, [2, 1, 0], [3, 3, 0]],
      [5, [3, 3, 0], [4, 3, 0]],
    ]);
    expect(runsOf([[], []])).toEqual([]);
  });

  it('refuses a part whose ids go down (its rows would be counted as two clusters)', () => {
    expect(() => runsOf([[0, 1, 0]])).toThrow(/part 0 has cluster id 0 after 1/);
    expect(() => runsOf([[1], [NaN]])).toThrow(/non-decreasing/);
  });

  it.each([0, 1, 2, 3])('one part: the very numbers of the general clustered mean and McNemar test (seed %i)', (seed) => {
    const [p] = seededParts(seed, 1, seed < 2);
    const d = concat([p], (x) => x.newValues).map((n, i) => n - p.oldValues[i]);
    expect(clusteredMeanOfRuns([p], diff)).toEqual(clusteredMean(d, p.clusters));
    const op = Array.from(p.oldValues, (x) => (passes(x) ? 1 : 0));
    const np = Array.from(p.newValues, (x) => (passes(x) ? 1 : 0));
    expect(clusteredMcNemarOfRuns([p], passes)).toEqual(clusteredMcNemar(taskFlipsOf(op, np, p.clusters)));
  });

  it.each([0, 1, 2, 3])('several parts: the numbers of the parts one after another, a task of two parts one cluster (seed %i)', (seed) => {
    const parts = seededParts(seed, 3, seed % 2 === 0);
    const olds = concat(parts, (p) => p.oldValues);
    const news = concat(parts, (p) => p.newValues);
    const tasks = concat(parts, (p) => p.clusters);
    const all = clusteredMeanOfRuns(parts, diff)!;
    const ref = clusteredMean(
      news.map((n, i) => n - olds[i]),
      tasks,
    )!;
    // Mean, Σ r² and the counts in the same order; the clusters' sums in ascending id: equal up to rounding.
    expect([all.mean, all.seIndependent, all.rows, all.clusters]).toEqual([ref.mean, ref.seIndependent, ref.rows, ref.clusters]);
    expect(all.se).toBeCloseTo(ref.se, 14);
    const m = clusteredMcNemarOfRuns(parts, passes);
    const flips = clusteredMcNemar(
      taskFlipsOf(
        olds.map((x) => +passes(x)),
        news.map((x) => +passes(x)),
        tasks,
      ),
    );
    expect([m.pf, m.fp, m.tasks]).toEqual([flips.pf, flips.fp, flips.tasks]);
    expect(m.statistic).toBeCloseTo(flips.statistic!, 12);
  });
});
