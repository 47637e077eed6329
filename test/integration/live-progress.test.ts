/**
 * Operating a run as a user does, through `node bin/reverify.js run` on the real dev server and the
 * reference server: live progress from running batches, Ctrl-C (SIGINT) and the re-run after it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_ROLLOUTS_MISSING } from '../../src/cli/exit-codes.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runCli } from '../helpers/cli-process.js';
import { keysOf, readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('live');
const rs = useReferenceServer({ port: 0, latencyMs: 60, seed: 5 });
const judgeFails = useReferenceServer({ port: 0, latencyMs: 5, judgeFailRate: 0.1, seed: 6 });
const client = useTemporalClient(temporal);

/** `reverify …` as a child process whose output is collected as it comes. */
function start(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, [reverifyBin, ...args], {
    env: { ...process.env, ...temporal.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const exited = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : -2))));
  return { child, out: () => text, exited };
}

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rollouts counts of the plain progress lines: `[###…] 120/800 rollouts …`. */
const progressCounts = (text: string) => [...text.matchAll(/\] (\d+)\/(\d+) rollouts/g)].map((m) => Number(m[1]));

describe('operating a run from the command line', () => {
  it(
    'progress counts rows inside a running batch; Ctrl-C hands the batch back; the re-run finishes quickly, no row lost or doubled',
    { timeout: 240_000 },
    async () => {
      const rows = 800;
      const dir = tempDir();
      const d = await sampleRun(dir, rs().port, { tasks: 200, repeats: 4 });
      // One batch of all the rows: nothing is committed before the end, so any count is live.
      // A heartbeat timeout of 60 s: the re-run must not wait for it.
      const args = [...runArgs(d), '--concurrency', '8', '--batch-size', String(rows), '--heartbeat-timeout', '60', '--max-attempts', '1'];
      const first = start(args);
      await until('the first verify answers', () => rs().stats().requests.verify > 0);
      const firstAnswers = Date.now();
      await until('a progress line with rows of the running batch', () => progressCounts(first.out()).some((n) => n > 0), 20_000);
      const latency = Date.now() - firstAnswers;
      // Counted while the batch runs, not at its end (its rows are committed only then).
      expect(Math.max(...progressCounts(first.out()))).toBeLessThan(rows);

      await until('a third of the rows', () => rs().stats().requests.verify >= rows / 3);
      const sentAtInterrupt = rs().stats().requests.verify;
      first.child.kill('SIGINT');
      const code = await first.exited;
      const printed = first.out();
      expect(code).toBe(130);
      expect(printed).toContain(
        'Stopping the in-process worker: running batches hand back what they finished (Ctrl-C again exits at once)',
      );
      expect(printed).toContain(
        `Stopped. The run waits for a worker: run the same command again to continue it, or \`reverify cancel -o ${d.output}\` to end it.`,
      );
      const desc = await client().workflow.getHandle(workflowIdForOutput(d.output)).describe();
      expect(desc.status.name).toBe('RUNNING');

      // Attaching with other options: they are named in one line (the run keeps its own).
      const other = start([...args.map((a) => (a === '8' ? '4' : a)), '--no-worker']);
      await until('the line naming the differing options', () => other.out().includes('Options that differ'), 30_000);
      expect(other.out()).toContain("Options that differ from the live run's own, which it keeps: --concurrency (run: 8, given: 4).");
      other.child.kill('SIGINT');
      expect(await other.exited).toBe(130);

      const again = await runCli(args.slice(), temporal.env, 120_000);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).toContain(`Attached to the live run for ${d.output}`);
      expect(again.stdout).not.toContain('Options that differ');
      // No failure line: the batch's attempt ended because its worker shut down, which is expected;
      // the new worker took it over without waiting for the 60 s heartbeat timeout.
      expect(again.stdout + again.stderr).not.toMatch(/Waiting:|heartbeat|timed out|Error/i);

      const written = readRows(d.output);
      expect(written).toHaveLength(rows);
      expect(new Set(keysOf(written)).size).toBe(rows);
      // The batch resumed from its checkpoint: only rows in flight at the Ctrl-C were sent twice.
      expect(rs().stats().verify_repeats).toBeLessThanOrEqual(8);
      expect(sentAtInterrupt).toBeGreaterThan(0);
      console.log(`first live count ${latency} ms after the first answers; repeats ${rs().stats().verify_repeats}`);
    },
  );

  it(
    'a second Ctrl-C exits at once, while the first waits for an activity that cannot stop (planning a big file)',
    { timeout: 180_000 },
    async () => {
      const dir = tempDir();
      // 100,000 rollouts: planning them takes seconds, and a plan activity finishes before its worker stops.
      const d = await sampleRun(dir, rs().port, { tasks: 25_000, repeats: 4 });
      const first = start(runArgs(d));
      await until('the plan phase', () => first.out().includes('Planning:'), 60_000);
      first.child.kill('SIGINT');
      // The second once the first is being handled (two signals sent together may arrive as one).
      await until('the first Ctrl-C handled', () => first.out().includes('Stopping the in-process worker'), 10_000);
      first.child.kill('SIGINT');
      // At once: before the plan activity ended (the first Ctrl-C would then print 'Stopped.').
      expect(await first.exited).toBe(130);
      expect(first.out()).toContain('Interrupted again: exiting now.');
      expect(first.out()).not.toContain('Stopped.');
      await client().workflow.getHandle(workflowIdForOutput(d.output)).terminate('test over');
    },
  );

  it('between re-judgment rounds the progress line shows the time left', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, judgeFails().port, { tasks: 50, repeats: 4 });
    const r = await runCli([...runArgs(d), '--rejudge-delay', '12', '--max-attempts', '2'], temporal.env, 120_000);
    // 0, or 3 when a row the simulated judge fails twice is left at the cap of 2 (the judge fails at random).
    expect([EXIT_OK, EXIT_ROLLOUTS_MISSING], r.stdout + r.stderr).toContain(r.code);
    const waits = [...r.stdout.matchAll(/^waiting to re-judge \(round 2\): starts in (\d+)s$/gm)].map((m) => Number(m[1]));
    expect(waits.length).toBeGreaterThan(0);
    for (const left of waits) expect(left).toBeLessThanOrEqual(12);
  });
});
