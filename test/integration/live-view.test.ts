/**
 * What a live run shows is true (issue 29 items 1 and 2): a multi-batch run (12 batches, judge
 * failures re-judged in later rounds) through `node bin/reverify.js run`, on the real dev server and
 * the reference server, sampled while it runs from the terminal's plain lines, `reverify status
 * --json` (and its text) and the workflow's progress query. Every sample: counts that never go
 * back, never above the plan nor above what the server has answered, rows in flight at most the
 * concurrency; at the end, the run's numbers are the server's count and the output file's rows.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/cli/run-report.js';
import { statusCommand } from '../../src/cli/status-command.js';
import type { Progress } from '../../src/contract/run-spec.js';
import { runView } from '../../src/contract/run-view.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { progressQuery } from '../../workflows/definitions.js';
import { readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('live-view');
const rs = useReferenceServer({ port: 0, latencyMs: 25, judgeFailRate: 0.05, seed: 11 });
const client = useTemporalClient(temporal);
const CONCURRENCY = 4;

/** `reverify status -o OUT [--json]` in-process: the report and the text lines. */
async function status(output: string, json: boolean): Promise<{ report: RunReport | null; lines: string[] }> {
  const lines: string[] = [];
  const report = await statusCommand(output, (l) => lines.push(l), { json });
  return { report, lines };
}

/** Each field of `samples` (in order) never goes back. */
function expectMonotone<T>(what: string, samples: T[], fields: Array<(s: T) => number>): void {
  for (const field of fields)
    for (let i = 1; i < samples.length; i++)
      expect(field(samples[i]), `${what} #${i}: ${JSON.stringify(samples[i - 1])} -> ${JSON.stringify(samples[i])}`).toBeGreaterThanOrEqual(
        field(samples[i - 1]),
      );
}

/** The counts of the terminal's plain progress lines. */
function terminalSamples(text: string): Array<{ settled: number; keys: number; ok: number; failed: number }> {
  return [...text.matchAll(/\] (\d+)\/(\d+) rollouts {2}(\d+) ok {2}(\d+) failed/g)].map((m) => ({
    settled: Number(m[1]),
    keys: Number(m[2]),
    ok: Number(m[3]),
    failed: Number(m[4]),
  }));
}

describe('the live views of a multi-batch run', () => {
  it('terminal, status --json and the progress query agree with the server and the files', { timeout: 300_000 }, async () => {
    const rows = 3000;
    const d = await sampleRun(tempDir(), rs().port, { tasks: rows / 4, repeats: 4 });
    const args = [
      ...runArgs(d),
      '--concurrency',
      String(CONCURRENCY),
      '--batch-size',
      '250',
      '--max-attempts',
      '4',
      '--rejudge-delay',
      '0.5',
    ];
    const child = spawn(process.execPath, [reverifyBin, ...args], {
      env: { ...process.env, ...temporal.env, REVERIFY_TEST_PROGRESS_LINE_MS: '500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    // Each progress line of the terminal with what the server had answered when it arrived: the line can show no more.
    const terminal: Array<{ settled: number; keys: number; ok: number; failed: number; server: number }> = [];
    let partial = '';
    child.stdout.on('data', (t) => {
      printed += t;
      const server = rs().stats().requests.verify;
      const complete = (partial + String(t)).split('\n');
      partial = complete.pop()!;
      terminal.push(...terminalSamples(complete.join('\n')).map((l) => ({ ...l, server })));
    });
    child.stderr.on('data', (t) => (printed += t));
    let exited = false;
    const code = new Promise<number>((r) => child.on('exit', (c) => ((exited = true), r(c ?? -1))));

    const handle = client().workflow.getHandle(workflowIdForOutput(d.output));
    const queried: Array<{ answered: number; scored: number; planned: number; slots: number; concurrency: number; server: number }> = [];
    const reports: Array<{ live: NonNullable<RunReport['live']>; workers: number | null; server: number }> = [];
    const liveText: string[][] = [];
    for (let i = 0; !exited; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const p = await handle.query(progressQuery).catch(() => null as Progress | null);
      const json = i % 3 !== 2;
      const s = await status(d.output, json).catch(() => null);
      // What the server has answered by now: no view may show more.
      const server = rs().stats().requests.verify;
      if (p && p.phase === 'verify') {
        const v = runView(p);
        const slots = (p.running ?? []).reduce((n, b) => n + b.slots, 0);
        queried.push({ answered: v.answered, scored: v.scored, planned: v.planned, slots, concurrency: p.concurrency, server });
      }
      if (s?.report?.state !== 'RUNNING' || s.report.live?.phase !== 'verify') continue;
      if (json) reports.push({ live: s.report.live, workers: s.report.workersPolling, server });
      else liveText.push(s.lines);
    }
    expect([0, 3], printed).toContain(await code);

    // The progress query: committed and ended batches, never back, never above the plan or the server.
    expectMonotone('progress query', queried, [(q) => q.answered, (q) => q.scored]);
    for (const q of queried) {
      expect(q.answered).toBeLessThanOrEqual(Math.min(q.planned, q.server));
      expect(q.slots).toBeLessThanOrEqual(q.concurrency);
    }
    // status --json: rows inside running batches too, in rows; the one worker alive.
    expect(reports.length).toBeGreaterThan(1);
    expect(reports.some((r) => r.live.finished > 0)).toBe(true);
    expectMonotone('status --json', reports, [
      (r) => r.live.finished,
      (r) => r.live.done,
      (r) => r.live.failed,
      (r) => r.live.requests?.used ?? 0,
    ]);
    for (const r of reports) {
      expect(r.live.finished).toBeLessThanOrEqual(Math.min(r.live.planned, r.server));
      expect(r.live.requests?.used ?? 0).toBeLessThanOrEqual(r.server);
      expect(r.live.inFlight).toBeLessThanOrEqual(CONCURRENCY);
      expect(r.workers).toBe(1);
    }
    // status of a live run: no advice to resume it.
    for (const lines of liveText) expect(lines.filter((l) => l.includes('--resume'))).toEqual([]);
    console.log(`terminal ok/failed/server: ${JSON.stringify(terminal.map((l) => [l.ok, l.failed, l.server]))}`);
    console.log(
      `status answered/scored/inFlight/server: ${JSON.stringify(reports.map((r) => [r.live.finished, r.live.done, r.live.inFlight, r.server]))}`,
    );
    // The terminal's lines: never back, never above the plan nor the server's answers.
    const lines = terminal;
    expect(lines.length).toBeGreaterThan(1);
    expectMonotone('terminal', lines, [(l) => l.ok, (l) => l.failed]);
    for (const l of lines) {
      expect(l.settled).toBeLessThanOrEqual(l.keys);
      expect(l.ok + l.failed).toBeLessThanOrEqual(l.server);
    }

    // The end: the run's own numbers are the server's count and the output's rows.
    const end = (await status(d.output, true)).report!;
    expect(end.state).toBe('COMPLETED');
    expect(end.result!.attempts.total).toBe(rs().stats().requests.verify);
    expect(end.result!.rollouts.scored).toBe(readRows(d.output).length);
    expect(Math.max(...reports.map((r) => r.live.finished))).toBeLessThanOrEqual(end.result!.attempts.total);
    console.log(
      `live views: ${queried.length} progress, ${reports.length} status --json, ${liveText.length} status text, ${lines.length} terminal samples; ` +
        `${end.result!.attempts.total} attempts in ${end.result!.attempts.rounds} round(s)`,
    );
  });
});
