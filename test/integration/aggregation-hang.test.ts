/**
 * A `/aggregate_metrics` that never answers, through the real CLI, a real scripted server and the
 * shared Temporal dev server:
 * - the terminal says what the run waits for within seconds (a `Waiting:` line), one Ctrl-C ends
 *   the command with the usual line, and the same command run again completes the aggregation;
 * - with a short deadline, the run ends with its outputs complete and the line that says how to
 *   compute the metrics later (the timeout is not retried).
 * Every command is killed after a bound, so one that would wait forever fails the test with what it printed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('aggregation-hang');
const server = closedAfterEach(startScriptedServer);

/** A reply that does not come within any test. */
const NEVER: Reply = { delayMs: 600_000, status: 200, body: {} };
const BOUND_MS = 60_000;

/** Runs `reverify args`, sends SIGINT once `ready` matches its stdout; killed after BOUND_MS. */
function interruptWhen(args: string[], ready: RegExp): Promise<CliOutcome & { interrupted: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [reverifyBin, ...args], {
      env: { ...process.env, ...temporal.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    child.stdout.on('data', (d) => {
      stdout += d;
      if (!interrupted && ready.test(stdout)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr, interrupted });
    });
  });
}

describe('a /aggregate_metrics that never answers', () => {
  it('says so within seconds; one Ctrl-C ends the command; the same command again completes the aggregation', async () => {
    let hung = true;
    const s = await server({ aggregate: () => (hung ? NEVER : emptyMetrics()) });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const args = [...runArgs(d), '--no-rejudge'];
    const waiting = new RegExp(`^Waiting: resources server 'mcqa_rs' at ${s.url} has not answered POST /aggregate_metrics for \\d+ s`, 'm');
    const first = await interruptWhen(args, waiting);
    const shown = `exit ${first.code}\n${first.stdout}\n${first.stderr}`;
    expect(first.interrupted, shown).toBe(true);
    expect(first.code, shown).toBe(130);
    expect(first.stderr, shown).toContain('Stopped. The run waits for a worker: run the same command again to continue it');
    expect(keysOf(readRows(d.output))).toHaveLength(12);

    hung = false;
    const again = await runCli(args, temporal.env, BOUND_MS);
    expect(again.code, `exit ${again.code}\n${again.stdout}\n${again.stderr}`).toBe(0);
    expect(again.stdout).toContain(`Aggregate metrics: ${join(dir, 'out_aggregate_metrics.json')}`);
  });

  it('past its deadline the run ends with the outputs complete and the command that computes the metrics later', async () => {
    const s = await server({ aggregate: () => NEVER });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const r = await runCli([...runArgs(d), '--no-rejudge'], { ...temporal.env, REVERIFY_TEST_AGGREGATE_TIMEOUT_MS: '2000' }, BOUND_MS);
    const shown = `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
    expect(r.code, shown).toBe(2);
    expect(r.stderr, shown).toMatch(
      new RegExp(
        `^Error: the rows are complete but the aggregate metrics could not be computed: resources server 'mcqa_rs' at ${s.url}: ` +
          `POST /aggregate_metrics failed: no complete reply within 2 s .*not retried`,
        'm',
      ),
    );
    expect(r.stderr, shown).toMatch(/^Compute the metrics later \(once the server is fixed\) with: reverify aggregate /m);
    // Not retried: one request per agent's group.
    expect(s.aggregateBodies.length).toBeLessThanOrEqual(2);
    expect(keysOf(readRows(d.output))).toHaveLength(12);
    expect(existsSync(join(dir, 'out_aggregate_metrics.json'))).toBe(false);
  });
});
