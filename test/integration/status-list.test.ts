/**
 * `reverify status -o OUT [--json]` and `reverify list [--json]` (issue 10 item 3), on the shared
 * dev server and the real reference resources server: a run started with --no-worker shows that
 * no worker polls its queue and what to do; once a worker attaches, its phase, counts, rate,
 * concurrency and the polling worker; once finished, the outcome, duration, counts, key metrics
 * and paths; `list` shows it with its output path and state. A failed run shows its error line.
 */
import { describe, expect, it } from 'vitest';
import type { ListedRun } from '../../src/cli/list-command.js';
import type { RunReport } from '../../src/cli/run-report.js';
import { statusCommand } from '../../src/cli/status-command.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { AGENTS, runArgs, runReverify, sampleRun } from '../helpers/run-fixtures.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { escapeRegExp } from '../helpers/regexp.js';

const temporal = useSharedTemporal('status-list');
const reference = closedAfterEach(startReferenceServer);
const scripted = closedAfterEach(startScriptedServer);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `reverify status` in-process: its lines. */
async function status(output: string): Promise<string[]> {
  const lines: string[] = [];
  await statusCommand(output, (l) => lines.push(l));
  return lines;
}

/** Polls `status` until a line matches (or the time is up): the lines of the last call. */
async function statusUntil(output: string, re: RegExp | RegExp[], timeoutMs = 60_000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  const all = Array.isArray(re) ? re : [re];
  let lines: string[] = [];
  while (Date.now() < end) {
    lines = await status(output).catch(() => []);
    if (all.every((r) => lines.some((l) => r.test(l)))) return lines;
    await sleep(500);
  }
  return lines;
}

describe('reverify status and list', () => {
  it('live without a worker, live with one, finished; list shows the run', async () => {
    const rs = await reference({ latencyMs: 150 });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 40, repeats: 4 });
    const args = [...runArgs(d), '--concurrency', '2', '--batch-size', '10', '--max-attempts', '1'];
    const noWorker = runCli([...args, '--no-worker'], temporal.env, 180_000);

    const waiting = await statusUntil(d.output, /^Workers: none polls/);
    expect(waiting[0]).toMatch(/^Run reverify-out\.jsonl-[0-9a-f]+: RUNNING \(since .*\)/);
    expect(waiting).toContain(`Output: ${d.output}`);
    expect(waiting).toContainEqual(expect.stringMatching(/^Progress: no worker answered the progress query/));
    expect(waiting).toContainEqual(
      expect.stringMatching(
        /^Workers: none polls task queue 'reverify-test-status-list-\d+': the run waits\. Run the same `reverify run` command again/,
      ),
    );
    const json = await runCli(['status', '-o', d.output, '--json'], temporal.env);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as RunReport;
    expect(report).toMatchObject({ state: 'RUNNING', output: d.output, workersPolling: 0, live: null });

    // A worker attaches (the same command without --no-worker): the run verifies.
    const withWorker = runCli(args, temporal.env, 180_000);
    // The worker's pollers show in describeTaskQueue a moment after it starts, and the run reaches
    // its verify phase after the phases before it (guard, prepare, plan, open, coverage): wait for both.
    const live = await statusUntil(d.output, [/^Workers: [1-9]\d* polling task queue/, /^Phase: verify, round 1/]);
    expect(live).toContain('Phase: verify, round 1');
    expect(live).toContainEqual(
      expect.stringMatching(
        /^Progress: \d+\/160 attempts: \d+ scored, 0 to the failures sidecar, 0 not persisted, \d+ in flight, [\d.]+ rows\/s, ETA /,
      ),
    );
    expect(live).toContain('Concurrency: 2');
    expect(live).toContainEqual(expect.stringMatching(/^Workers: [1-9]\d* polling task queue/));
    console.log(['reverify status of a live run:', ...live].join('\n'));

    const [a, b] = await Promise.all([withWorker, noWorker]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);

    const done = await status(d.output);
    console.log(['reverify status of a finished run:', ...done].join('\n'));
    expect(done[0]).toMatch(/^Run reverify-out\.jsonl-[0-9a-f]+: COMPLETED \(.* to .*, \d+s\)/);
    expect(done).toContain('Outcome: complete (exit status 0)');
    expect(done).toContain(
      'Rollouts: 160 planned: 160 scored, 0 still missing from the score after 1 round(s), 0 not persisted (160 attempts, 0 of them in the failures sidecar)',
    );
    for (const agent of AGENTS) {
      expect(done).toContain(`  ${agent}: 80 planned: 80 scored, 0 still missing, 0 not persisted`);
      expect(done).toContainEqual(expect.stringMatching(new RegExp(`^Key metrics for ${agent}: \\{`)));
    }
    expect(done).toContain(`Re-verified rollouts: ${d.output}`);
    expect(done).toContainEqual(expect.stringMatching(/^Aggregate metrics: .*out_aggregate_metrics\.json$/));

    const list = await runCli(['list', '--json'], temporal.env);
    expect(list.code, list.stderr).toBe(0);
    const runs = JSON.parse(list.stdout) as ListedRun[];
    expect(runs.find((r) => r.output === d.output)).toMatchObject({ state: 'COMPLETED', progress: '160/160 scored' });
    const text = await runCli(['list'], temporal.env);
    expect(text.stdout).toMatch(new RegExp(`^COMPLETED +160/160 scored .* ${escapeRegExp(d.output)}$`, 'm'));
  }, 240_000);

  it('a failed run: its state and the line `reverify run` printed', async () => {
    const s = await scripted({ verify: () => ({ status: 404, body: { detail: 'Not Found' } }) });
    const d = await sampleRun(tempDir(), s.port, { tasks: 20, repeats: 2 });
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(run.error?.line).toMatch(/rejected the first 20 \/verify requests/);
    const failed = await status(d.output);
    expect(failed[0]).toMatch(/^Run reverify-out\.jsonl-[0-9a-f]+: FAILED \(.* to .*\)/);
    expect(failed).toContain(run.error!.line);
  });

  it('no run for the output: one line, exit 1', async () => {
    const out = `${tempDir()}/nothing.jsonl`;
    const r = await runCli(['status', '-o', out], temporal.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: no run found for output '.*nothing\.jsonl' .*`reverify list`/);
  });
});
