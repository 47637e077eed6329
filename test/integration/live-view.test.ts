/**
 * What a run shows is true (issue 29): one multi-batch run (8 batches of 250, judge failures
 * re-judged in later rounds) through `node bin/reverify.js run`, on the real dev server and the
 * reference server, stopped with Ctrl-C (SIGINT) in the middle and continued with `--resume`. While
 * it runs it is sampled from every view — the terminal's plain progress lines (both processes),
 * `reverify status --json` (and its text) from this second process, the workflow's progress query
 * and its details (the Temporal UI's summary) — and each sample is checked against the verifier's
 * own count (the reference server counts requests and answers) and the output file: counts never go
 * back, never exceed the plan nor what the verifier answered, rows in flight are at most the
 * concurrency, the committed count is at most the file's rows and the view at least them, and each
 * view lags the verifier by at most what it answers in one checkpoint interval (from the config:
 * src/contract/checkpoint-interval.ts). At the end the summary, the coverage file, the 🚨 lines and
 * the exit status say the same.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { queryProgress } from '../../src/cli/query-progress.js';
import type { RunReport } from '../../src/cli/run-report.js';
import { statusCommand } from '../../src/cli/status-command.js';
import { CHECKPOINT_INTERVAL_MS } from '../../src/contract/checkpoint-interval.js';
import type { Coverage } from '../../src/contract/coverage.js';
import { DROPPED_FROM_SCORE } from '../../src/contract/dropped-row.js';
import { runView } from '../../src/contract/run-view.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('live-view');
const LATENCY_MS = 30;
const rs = useReferenceServer({ port: 0, latencyMs: LATENCY_MS, judgeFailRate: 0.1, seed: 11 });
const client = useTemporalClient(temporal);
const ROWS = 2000;
const BATCH = 250;
const CONCURRENCY = 4;
/** What the verifier answers at full speed (every lane busy) in one checkpoint interval, plus one request per lane (answered as a worker stopped). */
const LAG = CONCURRENCY * Math.ceil(CHECKPOINT_INTERVAL_MS / LATENCY_MS) + CONCURRENCY;
/** The workflow's own view (the query, the UI's details) has no checkpoints: the rows inside running batches, at most one batch per lane. */
const LAG_WITHOUT_CHECKPOINTS = CONCURRENCY * BATCH + LAG;

/** What the verifier has answered (received and no longer in flight), and its requests. */
function verifier(): { answered: number; requests: number } {
  const s = rs().stats();
  return { answered: s.requests.verify - s.verify_in_flight, requests: s.requests.verify };
}

/** Complete lines of a JSONL file (one being appended to may end in a partial line). */
function fileRows(path: string): number {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').length - 1 : 0;
}

/** One sample of one view, with the verifier's count just before and just after it was read. */
interface Sample {
  view: string;
  answered: number;
  planned: number;
  scored: number;
  failed: number;
  inFlight: number;
  concurrency: number;
  requests?: number;
  before: { answered: number; requests: number };
  after: { answered: number; requests: number };
}

/** Every sample true against the verifier; each view's samples never go back. */
function expectTrue(samples: Sample[], lag: number): void {
  for (const [i, s] of samples.entries()) {
    const what = `${s.view} #${i}: ${JSON.stringify(s)}`;
    expect(s.answered, what).toBeLessThanOrEqual(Math.min(s.planned, s.after.answered));
    expect(s.answered, what).toBeGreaterThanOrEqual(s.before.answered - lag);
    expect(s.scored + s.failed, what).toBeLessThanOrEqual(s.answered);
    expect(s.inFlight, what).toBeLessThanOrEqual(s.concurrency);
    if (s.requests !== undefined) expect(s.requests, what).toBeLessThanOrEqual(s.after.requests);
    if (i === 0) continue;
    const p = samples[i - 1];
    for (const k of ['answered', 'scored', 'failed', 'requests'] as const)
      expect(s[k] ?? 0, `${what} after ${JSON.stringify(p)}`).toBeGreaterThanOrEqual(p[k] ?? 0);
  }
}

/** `reverify run …` as a child process; its plain progress lines become samples as they arrive. */
function startRun(args: string[], view: string, samples: Sample[]) {
  const child = spawn(process.execPath, [reverifyBin, ...args], {
    env: { ...process.env, ...temporal.env, REVERIFY_TEST_PROGRESS_LINE_MS: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let partial = '';
  // When each printed line arrived (for the timings logged).
  const arrived: Array<{ t: number; line: string }> = [];
  // A line is read just before it is printed: the verifier's count when the previous chunk arrived comes before it.
  let before = verifier();
  child.stdout.on('data', (t) => {
    text += t;
    const after = verifier();
    const lines = (partial + String(t)).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      arrived.push({ t: Date.now(), line });
      const m = /\] (\d+)\/(\d+) rollouts {2}(\d+) ok {2}(\d+) failed/.exec(line);
      if (!m) continue;
      const attempts = /attempts (\d+)\/(\d+)/.exec(line);
      samples.push({
        view,
        answered: Number(attempts?.[1] ?? m[1]),
        planned: Number(attempts?.[2] ?? m[2]),
        scored: Number(m[3]),
        failed: Number(m[4]),
        inFlight: 0,
        concurrency: CONCURRENCY,
        before,
        after,
      });
    }
    before = after;
  });
  child.stderr.on('data', (t) => (text += t));
  const exited = new Promise<number>((r) => child.on('exit', (c, signal) => r(c ?? (signal ? -1 : -2))));
  const at = (re: RegExp) => arrived.find((a) => re.test(a.line))?.t ?? NaN;
  return { child, out: () => text, exited, at, last: (re: RegExp) => arrived.filter((a) => re.test(a.line)).at(-1)?.t ?? NaN };
}

/** The `**Rows:**` line of the workflow's details (the UI's summary panel). */
function detailsCounts(details: string | undefined) {
  const m = /^\*\*Rows:\*\* (\d+)\/(\d+) answered · (\d+) scored · (\d+) failed .* (\d+) in flight$/m.exec(details ?? '');
  return m && { answered: Number(m[1]), planned: Number(m[2]), scored: Number(m[3]), failed: Number(m[4]), inFlight: Number(m[5]) };
}

describe('the live views of a multi-batch run stopped and resumed', () => {
  it(
    'terminal, status --json, the query and the details agree with the verifier and the files; the end with the coverage',
    { timeout: 240_000 },
    async () => {
      const d = await sampleRun(tempDir(), rs().port, { tasks: ROWS / 4, repeats: 4 });
      const sidecarPath = d.output.replace(/\.jsonl$/, '_failures.jsonl');
      const args = [
        ...runArgs(d),
        '--concurrency',
        String(CONCURRENCY),
        '--batch-size',
        String(BATCH),
        '--max-attempts',
        '3',
        '--rejudge-delay',
        '0.5',
      ];
      const terminal: Sample[][] = [[], []];
      const query: Sample[] = [];
      const details: Sample[] = [];
      const status: Array<Sample & { workers: number | null; ctrlC: boolean }> = [];
      const files: Array<{ committed: number; fileBefore: number; fileAfter: number; scored: number }> = [];
      const statusText: string[][] = [];
      let ctrlC = false;
      let running = true;
      const handle = client().workflow.getHandle(workflowIdForOutput(d.output));

      // Every second: the file, the workflow's query and details, the file again.
      const sampleWorkflow = async () => {
        while (running) {
          await new Promise((r) => setTimeout(r, 1000));
          const before = verifier();
          const fileBefore = fileRows(d.output);
          // Bounded: with no worker (after the Ctrl-C, after the end) a query waits for the server's own timeout.
          const p = await queryProgress(handle, 2000);
          const meta = await handle.client
            .withDeadline(Date.now() + 2000, () => handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata'))
            .catch(() => null);
          const fileAfter = fileRows(d.output);
          const after = verifier();
          if (p?.phase !== 'verify') continue;
          const v = runView(p);
          const slots = (p.running ?? []).reduce((n, b) => n + b.slots, 0);
          query.push({ view: 'query', ...v, inFlight: slots, concurrency: p.concurrency, requests: v.requests.used, before, after });
          files.push({ committed: p.done, fileBefore, fileAfter, scored: v.scored });
          const shown = detailsCounts(meta?.currentDetails);
          if (shown) details.push({ view: 'details', ...shown, concurrency: p.effectiveConcurrency, before, after });
        }
      };
      // Back to back (each samples the rate for 2 s): `reverify status --json`, every third one as text.
      const sampleStatus = async () => {
        for (let i = 0; running; i++) {
          const before = verifier();
          const lines: string[] = [];
          const json = i % 3 !== 2;
          const report = await statusCommand(d.output, (l) => lines.push(l), { json }).catch(() => null as RunReport | null);
          const after = verifier();
          if (report?.state !== 'RUNNING' || report.live?.phase !== 'verify') continue;
          if (!json) statusText.push(lines);
          const l = report.live;
          status.push({
            view: 'status --json',
            answered: l.finished,
            planned: l.planned,
            scored: l.done,
            failed: l.failed,
            inFlight: l.inFlight,
            concurrency: CONCURRENCY,
            requests: l.requests?.used ?? 0,
            before,
            after,
            workers: report.workersPolling,
            ctrlC,
          });
        }
      };
      const samplers = Promise.all([sampleWorkflow(), sampleStatus()]);
      const t0 = Date.now();

      // The run, stopped with Ctrl-C in its first round, then `--resume` (it attaches to the live run and finishes it).
      const first = startRun(args, 'terminal 1', terminal[0]);
      for (const t0 = Date.now(); verifier().answered < ROWS * 0.4; await new Promise((r) => setTimeout(r, 100)))
        if (Date.now() - t0 > 120_000) throw new Error(`no progress: ${first.out()}`);
      first.child.kill('SIGINT');
      expect(await first.exited, first.out()).toBe(130);
      ctrlC = true;
      const tCtrlC = Date.now();
      await new Promise((r) => setTimeout(r, 2000));
      const resumed = startRun([...args, '--resume'], 'terminal 2', terminal[1]);
      const code = await resumed.exited;
      const tEnd = Date.now();
      running = false;
      await samplers;
      const printed = resumed.out();
      expect([0, 3], printed).toContain(code);
      expect(printed).toContain('Attached to the live run');

      console.log(
        `samples: terminal ${terminal.map((t) => t.length).join('+')}, status --json ${status.length}, status text ${statusText.length}, ` +
          `query ${query.length}, details ${details.length}; lag allowed ${LAG} rows (${LAG_WITHOUT_CHECKPOINTS} without checkpoints)`,
      );
      const maxLag = (xs: Sample[]) => Math.max(0, ...xs.map((s) => s.before.answered - s.answered));
      console.log(
        `${((tCtrlC - t0) / 1000).toFixed(1)} s to the Ctrl-C, ${((Date.now() - tCtrlC) / 1000).toFixed(1)} s from it to the end; largest lag behind the verifier: ` +
          `terminal ${maxLag(terminal.flat())}, status ${maxLag(status)}, query ${maxLag(query)}, details ${maxLag(details)} rows`,
      );
      const secs = (t: number) => `${((t - tCtrlC) / 1000).toFixed(1)} s`;
      console.log(
        `after the Ctrl-C: attached at ${secs(resumed.at(/^Attached/))}, progress lines ${secs(resumed.at(/ rollouts {2}/))}..${secs(resumed.last(/ rollouts {2}|^waiting to re-judge/))}, ` +
          `summary at ${secs(resumed.at(/^Rollouts: /))}, exit at ${secs(tEnd)}`,
      );
      console.log(`status answered/verifier: ${JSON.stringify(status.map((s) => [s.answered, s.before.answered, s.after.answered]))}`);
      console.log(`terminal answered/verifier: ${JSON.stringify(terminal.flat().map((s) => [s.answered, s.before.answered]))}`);
      // Every view, every sample: true against the verifier, never back (the terminal's across both processes).
      for (const t of terminal) expect(t.length).toBeGreaterThan(1);
      expect(status.filter((s) => !s.ctrlC).length).toBeGreaterThan(1);
      expect(status.filter((s) => s.ctrlC).length).toBeGreaterThan(1);
      expectTrue(terminal.flat(), LAG);
      expectTrue(status, LAG);
      expectTrue(query, LAG_WITHOUT_CHECKPOINTS);
      expectTrue(details, LAG_WITHOUT_CHECKPOINTS);
      // Files: the committed count never ahead of the output file; the view never behind it.
      for (const f of files) {
        expect(f.committed, JSON.stringify(f)).toBeLessThanOrEqual(f.fileAfter);
        expect(f.fileBefore, JSON.stringify(f)).toBeLessThanOrEqual(f.scored);
      }
      // Workers: the one alive (before the Ctrl-C; the stopped one stays listed by the server for a while after it).
      // One worker process was alive before the Ctrl-C: never more counted (exited ones are not), and it is seen.
      // A single read may find the task queue's poller list momentarily empty (between two long polls).
      for (const s of status) if (!s.ctrlC) expect(s.workers ?? 0, JSON.stringify(s)).toBeLessThanOrEqual(1);
      expect(status.filter((s) => !s.ctrlC && s.workers === 1).length).toBeGreaterThan(0);
      expect(status.filter((s) => (s.workers ?? 0) >= 1).length).toBeGreaterThan(status.length / 2);
      // A live run's status gives no advice to resume it.
      for (const lines of statusText) expect(lines.filter((l) => l.includes('--resume'))).toEqual([]);

      // The end: the summary, the coverage file, the 🚨 lines and the exit status say the same.
      const main = readRows(d.output);
      const sidecar = readRows(sidecarPath);
      const cov = JSON.parse(readFileSync(d.output.replace(/\.jsonl$/, '_coverage.json'), 'utf8')) as Coverage;
      const scored = new Set(main.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`)).size;
      const missing = cov.retryable + cov.unknown + cov.never_dispatched + cov.attempts_exhausted;
      expect(scored).toBe(main.length);
      expect([cov.expected, cov.successful, cov.attempts]).toEqual([ROWS, scored, main.length + sidecar.length]);
      expect([cov.reporting.main_rows, cov.reporting.sidecar_rows]).toEqual([main.length, sidecar.length]);
      expect(missing).toBe(ROWS - scored);
      expect(code).toBe(missing > 0 ? 3 : 0);
      const alarms = (first.out() + printed).split('\n').filter((l) => l.startsWith(DROPPED_FROM_SCORE));
      expect(alarms).toHaveLength(missing);
      expect(printed).toMatch(new RegExp(`^Rollouts: ${ROWS} planned: ${scored} scored, ${missing} still missing from the score`, 'm'));
      expect(printed).toContain(`Scored: ${scored}/${ROWS} rollouts of the output`);
      expect(printed).toMatch(new RegExp(`^ {2}${ROWS} expected: ${scored} successful, ${cov.failed} failed, `, 'm'));
      expect(printed.split('\n').filter((l) => l.startsWith('Incomplete:')).length > 0).toBe(missing > 0);
      // The verifier was asked for every key; each answer is a row of the files but those in flight at the Ctrl-C.
      const served = rs().stats();
      expect(served.requests.verify - served.verify_repeats).toBe(ROWS);
      expect(served.requests.verify).toBeGreaterThanOrEqual(main.length + sidecar.length);
      expect(served.requests.verify).toBeLessThanOrEqual(main.length + sidecar.length + CONCURRENCY);
      // What status says of the ended run is the files' count.
      const end = (await statusCommand(d.output, () => undefined, { json: true }))!;
      expect(end.state).toBe('COMPLETED');
      expect(end.result!.rollouts.scored).toBe(scored);
      console.log(`end: ${scored}/${ROWS} scored, ${missing} missing, exit ${code}, ${served.requests.verify} requests`);
    },
  );
});
