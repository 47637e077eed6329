/**
 * The live paired estimate end to end (real Temporal dev server, real reference server): at the end
 * of a run every task is in, so each interval is the exact value, computed here from the output
 * and --rollouts.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { readRows, runReverify as run, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { emptyMetrics, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('live-estimate');
const rs = useReferenceServer({ port: 0, seed: 2 });
const server = closedAfterEach(startScriptedServer);

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
const agentOf = (r: Row) => (r.agent_ref as { name: string }).name;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('live estimate', () => {
  it("ends with each agent's delta, old and new mean exact: the paired mean difference of the output and --rollouts", async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 20, repeats: 4 });
    // A planted change: the stored rewards of some rollouts set to 0, so the new judge raises them where they are right.
    const rollouts = readRows(d.rolloutsPath).map((r) =>
      Number(r._ng_task_index) % 3 === 0 && Number(r._ng_rollout_index) < 2 ? { ...r, reward: 0 } : r,
    );
    writeFileSync(d.rolloutsPath, rollouts.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 4,
      batchSize: 7, // tasks of 4 rollouts split across batches
      confidence: 0.9,
    });
    expect(error).toBeNull();
    const fresh = new Map(readRows(d.output).map((r) => [keyOf(r), Number(r.reward)]));
    expect(fresh.size).toBe(80);
    const est = result!.estimate!;
    expect(est.confidence).toBe(0.9);
    for (const agent of [null, 'agent_a', 'agent_b']) {
      const rows = rollouts.filter((r) => agent === null || agentOf(r) === agent);
      const olds = rows.map((r) => Number(r.reward));
      const news = rows.map((r) => fresh.get(keyOf(r))!);
      const view = agent === null ? est.all : est.perAgent[agent];
      const exact = mean(news.map((n, i) => n - olds[i]));
      expect(exact).not.toBe(0);
      expect(view.delta!.lo).toBeCloseTo(exact, 12);
      expect(view.delta!.hi).toBeCloseTo(exact, 12);
      expect(view.newMean!.estimate).toBeCloseTo(mean(news), 12);
      expect(view.oldMean!.estimate).toBeCloseTo(mean(olds), 12);
      // Units: runs of consecutive rows of one task in the plan's order (here --rollouts', which interleaves tasks).
      const starts = rollouts.filter((r, i) => i === 0 || r._ng_task_index !== rollouts[i - 1]._ng_task_index);
      const units = starts.filter((r) => agent === null || agentOf(r) === agent).length;
      expect(view.tasks).toEqual({ seen: units, pending: 0, planned: units });
    }
  });

  it('re-judgment rounds settle the judge failures they score: only the rows never scored stay at their worst case', async () => {
    const dir = tempDir();
    // Task t's judge fails the first t % 3 attempts of each rollout, then grades 1.0; 2 attempts in all.
    const judge = await server({
      aggregate: emptyMetrics,
      verify: (row, attempt) =>
        attempt < (row._ng_task_index as number) % 3
          ? reward(0.0, { _ng_failure_class: 'judge_failed', _ng_failure_judge_error: `JudgeError: attempt ${attempt + 1}` })
          : reward(1.0),
    });
    const d = await sampleRun(dir, judge.port, { tasks: 12, repeats: 2 });
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      batchSize: 5,
      order: 'random',
      orderSeed: 4,
      maxAttempts: 2,
      rejudgeDelayMs: 0,
      confidence: 0.9,
    });
    expect(error).toBeNull();
    expect(result!.rounds).toBe(2);
    const rollouts = readRows(d.rolloutsPath);
    const fresh = new Map(readRows(d.output).map((r) => [keyOf(r), Number(r.reward)]));
    const never = rollouts.filter((r) => !fresh.has(keyOf(r)));
    // Tasks failing twice are never scored; those failing once are, by round 2.
    expect(never.map((r) => Number(r._ng_task_index) % 3)).toEqual(never.map(() => 2));
    expect(never.length).toBeGreaterThan(0);
    const est = result!.estimate!;
    // The full run's value with the never-scored rows at 0 and at 1: the interval is exactly that range.
    const deltaWith = (unknown: number) => mean(rollouts.map((r) => (fresh.get(keyOf(r)) ?? unknown) - Number(r.reward)));
    expect(est.all.delta!.lo).toBeCloseTo(deltaWith(0), 12);
    expect(est.all.delta!.hi).toBeCloseTo(deltaWith(1), 12);
    // One unit per (agent, task) in random order; the pending ones are the tasks never scored.
    const neverUnits = new Set(never.map((r) => `${agentOf(r)}:${r._ng_task_index}`)).size;
    expect(est.all.tasks.pending).toBe(neverUnits);
  });
});
