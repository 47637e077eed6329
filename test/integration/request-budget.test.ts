/**
 * The request budget (issue 10 item 7) through the CLI, on the shared dev server and the real
 * reference resources server, whose counters count the `/verify` requests it received: a run with
 * `--max-requests` below its rows pauses after exactly that many, `reverify status` shows the count
 * and the pause, the command the run printed raises the budget, and the run ends with the very
 * output of an unbudgeted run, every row sent once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlCommand } from '../../src/cli/control-command.js';
import { queryProgress } from '../../src/cli/query-progress.js';
import { ConfigError } from '../../src/contract/errors.js';
import { statusCommand } from '../../src/cli/status-command.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runCli, runShell } from '../helpers/cli-process.js';
import type { WorkflowHandle } from '@temporalio/client';
import type { Progress } from '../../src/contract/run-spec.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { reward, startScriptedServer } from '../helpers/scripted-server.js';
import { keysOf, readRows, runArgs, runReverify, sampleRun } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('request-budget');
const client = useTemporalClient(temporal);
const reference = closedAfterEach(startReferenceServer);
const scripted = closedAfterEach(startScriptedServer);

/** Polls the progress query until `ok` holds. */
async function untilProgress(handle: WorkflowHandle, ok: (p: Progress) => boolean, timeoutMs = 60_000): Promise<void> {
  for (const t = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    const p = await queryProgress(handle, 5000);
    if (p && ok(p)) return;
    if (Date.now() - t > timeoutMs) throw new Error(`the run's progress did not reach the state awaited; last: ${JSON.stringify(p)}`);
  }
}

/** Polls `reverify status` (in-process) until a line matches: the lines of that call. */
async function statusUntil(output: string, re: RegExp, timeoutMs = 60_000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  let lines: string[] = [];
  while (Date.now() < end) {
    lines = [];
    await statusCommand(output, (l) => lines.push(l)).catch(() => undefined);
    if (lines.some((l) => re.test(l))) return lines;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no status line matched ${re} in ${timeoutMs} ms; last:\n${lines.join('\n')}`);
}

/** `reverify run` options of a sample run, for an in-process run. */
const rawOf = (d: Awaited<ReturnType<typeof sampleRun>>) => ({ inputs: d.inputsPath, rollouts: d.rolloutsPath, configs: [d.config] });

/** A file's lines, sorted (batches commit in the order they finish). */
const sortedLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).sort();

describe('--max-requests', () => {
  it('pauses after exactly N /verify requests, status shows it, the printed command raises it, and the output is that of an unbudgeted run', async () => {
    const rs = await reference({ port: 0, latencyMs: 20, seed: 1 });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 10, repeats: 4 }); // 40 rows
    const flags = ['--concurrency', '4', '--batch-size', '10', '--max-attempts', '1'];
    // Killed well before the test's own timeout, so that a run that hangs shows what it printed.
    const running = runCli([...runArgs(d), ...flags, '--max-requests', '15'], temporal.env, 80_000);

    const paused = await statusUntil(d.output, /PAUSED: request budget spent/);
    expect(paused).toContain('Phase: verify, round 1, PAUSED: request budget spent (reverify control --max-requests N)');
    expect(paused).toContain('Requests: 15/15 /verify requests made (used/--max-requests)');
    // Counted at the server: exactly the budget, still so after status sampled the run's rate (2 s).
    expect(rs.stats().requests.verify).toBe(15);

    const progress = await queryProgress(client().workflow.getHandle(workflowIdForOutput(d.output)), 10_000);
    const line = progress!.messages.find((m) => m.startsWith('Paused: the request budget is spent'))!;
    expect(line).toMatch(
      /^Paused: the request budget is spent \(15 of --max-requests 15 \/verify requests made\); unsent rows wait\. Raise it with: reverify control -o \S+ --max-requests (\d+)$/,
    );
    const raise = await runShell(line.slice(line.indexOf('reverify control')), temporal.env);
    expect(raise.code, raise.stderr).toBe(0);
    expect(raise.stdout).toMatch(/^Request budget of reverify-out\.jsonl-[0-9a-f]+ set to \d+ \/verify requests\n$/);

    const run = await running;
    expect(
      run.code,
      `${run.stdout}\n${run.stderr}\n${JSON.stringify(await queryProgress(client().workflow.getHandle(workflowIdForOutput(d.output)), 5000))}`,
    ).toBe(0);
    // The run printed the line once, and every row was sent once: 40 requests in all.
    expect(`${run.stdout}${run.stderr}`.split('\n').filter((l) => l === line)).toHaveLength(1);
    expect(rs.stats().requests.verify).toBe(40);
    expect(rs.stats().verify_repeats).toBe(0);

    // The same run without a budget (in this process: the same code, a faster start).
    const free = join(tempDir(), 'out.jsonl');
    const unbudgeted = await runReverify({ ...rawOf(d), output: free, concurrency: 4, batchSize: 10 });
    expect(unbudgeted.error).toBeNull();
    expect(sortedLines(d.output)).toEqual(sortedLines(free));
    expect(sortedLines(d.output)).toHaveLength(40);
    // Metrics to 12 digits: they are sums over the rows in file order, which is the order batches finished.
    // Per agent (the file lists agents in the order the output first names them, which follows commit order).
    const metrics = (p: string) =>
      (
        JSON.parse(readFileSync(p.replace(/\.jsonl$/, '_aggregate_metrics.json'), 'utf8'), (_k, v: unknown) =>
          typeof v === 'number' ? Number(v.toPrecision(12)) : v,
        ) as { agent_ref: { name: string } }[]
      ).sort((a, b) => a.agent_ref.name.localeCompare(b.agent_ref.name));
    expect(metrics(d.output)).toEqual(metrics(free));
  });

  it('cancelled while paused on its budget, `--resume` sends the rest: no row lost or doubled, no row failed', async () => {
    const rs = await reference({ port: 0, latencyMs: 20, seed: 1 });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 10, repeats: 4 }); // 40 rows
    const opts = { ...rawOf(d), output: d.output, concurrency: 4, batchSize: 10 };
    const running = runReverify({ ...opts, maxRequests: 15 });
    const handle = client().workflow.getHandle(workflowIdForOutput(d.output));
    for (let t = Date.now(); (await queryProgress(handle, 5000))?.budgetPaused !== true;) {
      if (Date.now() - t > 60_000) throw new Error('the run did not pause on its budget');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rs.stats().requests.verify).toBe(15);
    const cancel = await runCli(['cancel', '-o', d.output, '--no-worker'], temporal.env);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect((await running).error?.code).toBe(4);
    // Held batches' answers were not committed: --resume sends them again, with the rows never sent.
    const committed = readRows(d.output).length;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(15);
    // record_unstarted: every rollout without a row is saved as evidence with why, and counted never dispatched.
    const unstarted = d.output.replace(/\.jsonl$/, '_unstarted.jsonl');
    const evidence = readFileSync(unstarted, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(evidence).toHaveLength(40 - committed);
    expect(new Set([...keysOf(evidence), ...keysOf(readRows(d.output))]).size).toBe(40);
    for (const e of evidence) {
      expect(Object.keys(e)).toEqual(['_ng_task_index', '_ng_rollout_index', '_ng_unstarted', '_ng_unstarted_reason']);
      expect(e._ng_unstarted_reason).toBe(
        'the request budget was spent (15 of --max-requests 15 /verify requests made) and the run was cancelled',
      );
    }
    const coverage = JSON.parse(readFileSync(d.output.replace(/\.jsonl$/, '_coverage.json'), 'utf8')) as Record<string, unknown>;
    expect(coverage).toMatchObject({ state: 'cancelled', never_dispatched: 40 - committed, intentionally_omitted: 0, failed: 0 });
    const resumed = await runReverify({ ...opts, resume: true });
    expect(resumed.error).toBeNull();
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(40);
    expect(new Set(keys).size).toBe(40);
    expect(readFileSync(d.output.replace(/\.jsonl$/, '_failures.jsonl'), 'utf8')).toBe('');
    expect(rs.stats().requests.verify).toBe(15 + 40 - committed);
    // The evidence is not an outcome: --resume ran those rollouts, and the finished run leaves none.
    expect(existsSync(unstarted)).toBe(false);
  });

  it('counts every try: a retry inside a batch takes a request of the budget, and a row left mid-retry goes on from there', async () => {
    // Every row's first request answers 500, its retry (after about 250 ms) succeeds: two requests per row.
    const rs = await scripted({ verify: (_row, attempt) => (attempt === 0 ? { status: 500, body: { detail: 'down' } } : reward(1.0)) });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 5, repeats: 2 }); // 10 rows, one batch, one lane
    const running = runReverify({ ...rawOf(d), output: d.output, concurrency: 1, batchSize: 10, maxRequests: 7 });
    const handle = client().workflow.getHandle(workflowIdForOutput(d.output));
    await untilProgress(handle, (p) => p.budgetPaused === true);
    // Rows 1-3 took two requests each; row 4 its first (500): its retry would be the 8th.
    expect(rs.verifyBodies).toHaveLength(7);
    expect((await queryProgress(handle, 5000))!.requests).toEqual({ used: 7, max: 7 });
    await controlCommand({ output: d.output, maxRequests: 100 }, () => undefined);
    const done = await running;
    expect(done.error).toBeNull();
    // Row 4 needed only its retry; rows 5-10 two each: 7 + 1 + 12.
    expect(rs.verifyBodies).toHaveLength(20);
    expect(keysOf(readRows(d.output))).toHaveLength(10);
    expect(done.result).toMatchObject({ done: 10, failed: 0 });
  });

  it('`reverify control --max-requests` refuses a count below 1 (a user error, before any server is asked)', async () => {
    const control = controlCommand({ output: join(tempDir(), 'out.jsonl'), maxRequests: 0 }, () => undefined);
    await expect(control).rejects.toThrow(ConfigError);
    await expect(control).rejects.toThrow('--max-requests must be a whole number >= 1, got 0');
  });
});
