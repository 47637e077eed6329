import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryProgress } from '../../src/cli/query-progress.js';
import { runCommand } from '../../src/cli/run-command.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { captureIo, keysOf, readRows, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('kill');
const rs = useReferenceServer({ port: 0, latencyMs: 40, seed: 2 });
const client = useTemporalClient(temporal);

const sortedLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).sort();

/** Seeded PRNG (mulberry32): the kill moments are random but the same on every run of the test. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('workers SIGKILLed in the middle of a run', () => {
  it(
    '5 kills at random moments lose no row and duplicate none; only rows in flight at a kill are verified twice',
    { timeout: 300_000 },
    async () => {
      const rows = 400;
      /** concurrency 4 with batches of 10: at most 4 batches, 40 rows, in flight. */
      const MAX_ROWS_IN_FLIGHT = 40;
      const dir = tempDir();
      const d = await sampleRun(dir, rs().port, { tasks: 100, repeats: 4 });
      const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, configs: [d.config], concurrency: 4, batchSize: 10, maxAttempts: 1 };

      // Undisturbed run, in-process worker.
      const calm = join(dir, 'calm.jsonl');
      await runCommand({ ...base, output: calm }, { worker: true, heartbeatTimeoutMs: 3000 }, captureIo());
      rs().resetStats();

      // Disturbed run: the work is done by separate worker processes, killed at 5 random moments.
      const random = seeded(42);
      const moments = Array.from({ length: 5 }, () => Math.floor(rows * (0.05 + 0.85 * random()))).sort((a, b) => a - b);
      const output = join(dir, 'killed.jsonl');
      let worker = await startWorkerProcess(temporal.env);
      const running = runCommand({ ...base, output }, { worker: false, heartbeatTimeoutMs: 3000 }, captureIo());
      const handle = client().workflow.getHandle(workflowIdForOutput(output));
      const inFlightAtKills: number[] = [];
      try {
        for (const moment of moments) {
          // The moment is read off the verifier's own counter (instant, in-process); the rows in
          // flight from the run's progress (a bounded query: the answering worker may be dead).
          while (rs().stats().requests.verify < moment) await new Promise((r) => setTimeout(r, 20));
          const p = await queryProgress(handle, 2000);
          inFlightAtKills.push(p ? p.inFlightRows : MAX_ROWS_IN_FLIGHT);
          await sigkill(worker);
          console.log(`${new Date().toISOString()} killed at ${inFlightAtKills.length} (moment ${moment})`);
          worker = await startWorkerProcess(temporal.env);
        }
        const result = await running;
        expect(result.done).toBe(rows);
      } finally {
        await sigkill(worker);
      }

      expect(inFlightAtKills).toHaveLength(5);
      const written = readRows(output);
      expect(written).toHaveLength(rows);
      expect(new Set(keysOf(written)).size).toBe(rows);
      expect(sortedLines(output)).toEqual(sortedLines(calm));
      expect(readFileSync(join(dir, 'killed_failures.jsonl'), 'utf8')).toBe('');
      const inFlightTotal = inFlightAtKills.reduce((a, b) => a + b, 0);
      expect(rs().stats().verify_repeats).toBeLessThanOrEqual(inFlightTotal);
      expect(rs().stats().requests.verify).toBeLessThanOrEqual(rows + inFlightTotal);
      console.log(
        `${new Date().toISOString()} kills at ${moments.join(', ')} rows; in flight ${inFlightAtKills.join(', ')}; verified twice: ${rs().stats().verify_repeats}`,
      );
    },
  );
});
