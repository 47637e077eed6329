/**
 * `--stop-when delta-excludes-zero` end to end (issue 32 item 3; real Temporal dev server, real
 * reference server): with a planted change in score (half the tasks' stored rewards set to 0), a
 * random-order run stops early; the rollouts it never started are recorded as unstarted with the
 * reason, the coverage and the summary say where it stopped, the exit status is 0, and the planted
 * delta (the full run's exact value) is inside the interval it printed. Then `--resume` (without
 * the rule) reuses the saved seed and completes the full set: every key once, none lost.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exitStatusOf } from '../../src/cli/end-summary.js';
import { coveragePath, unstartedPath } from '../../src/contract/file-names.js';
import { keysOf, readRows, runReverify as run, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('stop-when');
const rs = useReferenceServer({ port: 0, seed: 2 });

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;

describe('--stop-when', () => {
  it(
    'stops early on a planted change, records the rest as unstarted, and --resume completes the full set',
    { timeout: 240_000 },
    async () => {
      const dir = tempDir();
      const d = await sampleRun(dir, rs().port, { tasks: 60, repeats: 4 });
      const rollouts = readRows(d.rolloutsPath).map((r) => (Number(r._ng_task_index) % 2 === 0 ? { ...r, reward: 0 } : r));
      writeFileSync(d.rolloutsPath, rollouts.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const common = {
        inputs: d.inputsPath,
        rollouts: d.rolloutsPath,
        output: d.output,
        configs: [d.config],
        concurrency: 2,
        batchSize: 8,
      };

      const first = await run({ ...common, order: 'random', orderSeed: 5, stopWhen: ['delta-excludes-zero'] });
      expect(first.error).toBeNull();
      const result = first.result!;
      const stopped = result.stoppedEarly!;
      expect(stopped).toMatchObject({ rule: 'delta-excludes-zero', planned: 240 });
      const scored = keysOf(readRows(d.output));
      expect(scored.length).toBeGreaterThanOrEqual(stopped.rows);
      expect(scored.length).toBeLessThan(240);
      expect(exitStatusOf(result)).toBe(0);
      const delta = result.estimate!.all.delta!;
      expect(delta.lo > 0 || delta.hi < 0).toBe(true);

      // The rest: recorded as unstarted (not omitted: no sidecar row), with the reason; the coverage counts them never dispatched.
      const reason = `stopped early: delta-excludes-zero at ${stopped.rows} of 240 rows`;
      const unstarted = readRows(unstartedPath(d.output));
      expect(unstarted).toHaveLength(240 - scored.length);
      expect(unstarted.every((u) => u._ng_unstarted === true && u._ng_unstarted_reason === reason)).toBe(true);
      expect(new Set([...scored, ...keysOf(unstarted)]).size).toBe(240);
      expect(existsSync(result.outputs.sidecar) ? readFileSync(result.outputs.sidecar, 'utf8') : '').toBe('');
      const coverage = JSON.parse(readFileSync(coveragePath(d.output), 'utf8'));
      expect(coverage).toMatchObject({
        state: 'finished',
        expected: 240,
        successful: scored.length,
        intentionally_omitted: 0,
        never_dispatched: unstarted.length,
        stopped_early: stopped,
        plan_order: { order: 'random', seed: 5 },
      });
      expect(first.lines).toContain(
        `Stopped early: delta-excludes-zero at ${stopped.rows} of 240 rows (--stop-when); ${unstarted.length} rollout(s) never started are listed in ${unstartedPath(d.output)}: ` +
          'to verify them too, run the same command with --resume and without --stop-when',
      );
      expect(first.lines.some((l) => l.startsWith('  all: delta '))).toBe(true);

      // --resume without the rule: the saved seed, the full set, every key once; the evidence file goes.
      const resumed = await run({ ...common, order: 'random', resume: true });
      expect(resumed.error).toBeNull();
      expect(resumed.lines).toContain('Order: random (seed 5)');
      expect(resumed.result!.stoppedEarly).toBeUndefined();
      expect(exitStatusOf(resumed.result!)).toBe(0);
      const all = readRows(d.output);
      expect(new Set(keysOf(all)).size).toBe(240);
      expect(all).toHaveLength(240);
      expect(keysOf(all).slice(0, scored.length)).toEqual(scored);
      expect(existsSync(unstartedPath(d.output))).toBe(false);
      expect(JSON.parse(readFileSync(coveragePath(d.output), 'utf8'))).toMatchObject({
        successful: 240,
        never_dispatched: 0,
        complete: true,
      });
      expect(JSON.parse(readFileSync(coveragePath(d.output), 'utf8')).stopped_early).toBeUndefined();

      // The planted delta, exact over the full run, is inside the interval the early stop printed.
      const fresh = new Map(all.map((r) => [keyOf(r), Number(r.reward)]));
      const exact = rollouts.reduce((n, r) => n + fresh.get(keyOf(r))! - Number(r.reward), 0) / rollouts.length;
      expect(exact).toBeGreaterThan(0);
      expect(delta.lo).toBeLessThanOrEqual(exact);
      expect(delta.hi).toBeGreaterThanOrEqual(exact);
    },
  );
});
