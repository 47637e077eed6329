/**
 * A row that always fails (500 or a reset) while the server answers everything else, alone in its
 * batch (`--batch-size 1`, a re-judgment round of one row): there is no other row of the batch to
 * probe the server with, so what the server answered this worker's other requests, or its liveness
 * route `GET /`, tells its own failure from an outage. The row lands in the sidecar as `transient`
 * after its strikes, as in a batch of many rows, instead of being retried without end.
 * The real CLI against a real scripted server and the shared Temporal dev server; each run is
 * killed after a bound, so a run that would wait forever fails the test with what it printed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, judgeFailed, keyText, reward, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('lone-row-failures');
const server = closedAfterEach(startScriptedServer);

/** Long enough for three attempts of a failing row (6 tries each, with backoff) and the run around them. */
const BOUND_MS = 100_000;

/** Runs `reverify run` on sample data whose row `3:0` gets `bad(attempt)`; expects it in the sidecar as transient, every other row in the output. */
async function runWithOneBadRow(bad: (attempt: number) => Reply, flags: string[]) {
  const s = await server({ aggregate: emptyMetrics, verify: (row, attempt) => (keyText(row) === '3:0' ? bad(attempt) : reward(1.0)) });
  const dir = tempDir();
  const d = await sampleRun(dir, s.port, { tasks: 4, repeats: 2 });
  const r = await runCli([...runArgs(d), '--request-timeout', '2', ...flags], temporal.env, BOUND_MS);
  const shown = `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
  // Exit 3: the row is missing from the score, below the attempt cap (docs/usage.md, exit statuses).
  expect(r.code, shown).toBe(3);
  expect(r.stdout, shown).toMatch(/^Incomplete: 1 rollout\(s\) still missing from the score/m);
  const side = readRows(join(dir, 'out_failures.jsonl')).filter((row) => row._ng_failure_class !== 'judge_failed');
  expect(side, shown).toHaveLength(1);
  expect(side[0]).toMatchObject({ _ng_task_index: 3, _ng_rollout_index: 0, reward: 0, _ng_failure_class: 'transient' });
  expect(keysOf(readRows(d.output)).sort()).toEqual(keysOf(readRows(d.rolloutsPath).filter((row) => keyText(row) !== '3:0')).sort());
  // While it retried, the run named the row by its key.
  expect(r.stdout, shown).toMatch(
    /^Waiting: verifyBatch attempt \d failed, Temporal retries it: 1 row\(s\) of the batch failed .*\(key \(3, 0\)\)/m,
  );
  return { s, side };
}

describe('a row alone in its batch that always fails while the server is up', () => {
  it('--batch-size 1, HTTP 500: the row ends in the sidecar as transient, every other row in the output', async () => {
    const { side } = await runWithOneBadRow(
      () => ({ status: 500, raw: '"ValueError: cannot grade"' }),
      ['--batch-size', '1', '--no-rejudge'],
    );
    expect(side[0]).toMatchObject({ verify_status: 500 });
  });

  it('--batch-size 1, connection reset: the same', async () => {
    const { side } = await runWithOneBadRow(() => ({ reset: true }), ['--batch-size', '1', '--no-rejudge']);
    expect(side[0]).toMatchObject({ verify_status: null });
  });

  it('a re-judgment round of that one row, HTTP 500: the same, the server answering GET /', async () => {
    const { s } = await runWithOneBadRow(
      (attempt) => (attempt === 0 ? judgeFailed() : { status: 500, raw: '"boom"' }),
      ['--rejudge-delay', '0'],
    );
    expect(s.requests.some((q) => q.method === 'GET' && q.url === '/')).toBe(true);
  });
});

describe('an outage with --batch-size 1', () => {
  it('the server down for every request (GET / too): the run waits, says why, and completes with every row when it is back', async () => {
    let downAt = 0;
    const s = await server({
      aggregate: emptyMetrics,
      verify: () => {
        if (downAt === 0) {
          downAt = Date.now();
          void s.stop().then(() => new Promise((r) => setTimeout(r, 15_000)).then(() => s.restart()));
          return { reset: true };
        }
        return reward(1.0);
      },
    });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 4, repeats: 2 });
    const r = await runCli([...runArgs(d), '--batch-size', '1', '--no-rejudge'], temporal.env, BOUND_MS);
    const shown = `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
    expect(r.code, shown).toBe(0);
    expect(r.stdout, shown).toMatch(/^Waiting: verifyBatch attempt \d failed, Temporal retries it: .* is unavailable/m);
    expect(readRows(join(dir, 'out_failures.jsonl'))).toEqual([]);
    expect(keysOf(readRows(d.output)).sort()).toEqual(keysOf(readRows(d.rolloutsPath)).sort());
  });
});
