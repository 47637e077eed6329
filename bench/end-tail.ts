/**
 * CPU time of the end of `reverify run` after the last answer, piece by piece, in this process:
 *
 *   npx tsx bench/end-tail.ts [--output bench/out/startup/run1/reverified.jsonl] [--repeat 5]
 *
 * On a finished run's files (by default those `bench/startup.ts` leaves), `--repeat` times: the
 * coverage count of the `writeCoverage` activity (`countCoverage`), and the run report
 * (`writeReport`, its HTML to `bench/out/end-tail/report.html`) with the history served from the
 * run's `<stem>_history.json` instead of a Temporal server; the report's parts are timed too: the
 * verdict join (`joinVerdicts`), the sidecar counts, the numbers (`reportData`:
 * the bootstraps). Prints wall and CPU ms (user + system of this process: compare these on a busy
 * machine) per piece and their medians, and a SHA-256 of the coverage counts and of the report's
 * HTML (equal before and after a change that must not change them). Profile with
 * `node --cpu-prof --cpu-prof-dir bench/out/end-tail-prof --import tsx bench/end-tail.ts`, then
 * `npx tsx bench/profile-top.ts bench/out/end-tail-prof`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { writeReport, type ReportTemporal } from '../src/cli/report-command.js';
import { historyPath, sidecarPath } from '../src/contract/file-names.js';
import { countCoverage } from '../src/planning/coverage-scan.js';
import { estimateHistoryOf } from '../src/report/estimate-history.js';
import { REPORT_CONFIDENCE } from '../src/report/paired-stats.js';
import { reportData } from '../src/report/report-data.js';
import { sidecarClasses } from '../src/report/sidecar-classes.js';
import { joinVerdicts } from '../src/report/verdict-join.js';
import type { TemporalTarget } from '../src/temporal/connection.js';

const { values } = parseArgs({
  options: {
    output: { type: 'string', default: 'bench/out/startup/run1/reverified.jsonl' },
    repeat: { type: 'string', default: '5' },
  },
});
const output = resolve(values.output);
const sidecar = sidecarPath(output);
const saved = JSON.parse(readFileSync(historyPath(output), 'utf8')) as { runs: { runId: string; history: unknown }[] };
const history = historyFromJSON(saved.runs[saved.runs.length - 1].history);
/** Each run of the chain by its id; the latest without one. */
const runHistory = (runId?: string) =>
  historyFromJSON((saved.runs.find((r) => r.runId === runId) ?? saved.runs[saved.runs.length - 1]).history);
const rollouts = (() => {
  const attrs = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return (JSON.parse(Buffer.from(attrs!).toString('utf8')) as { rolloutsPath: string }).rolloutsPath;
})();
// A client that only serves this run's histories (the report reads nothing else from the server).
const temporal: ReportTemporal = {
  client: {
    workflow: { getHandle: (_id: string, runId?: string) => ({ fetchHistory: () => Promise.resolve(runHistory(runId)) }) },
  } as unknown as Client,
  target: { address: 'bench', namespace: 'default', uiUrl: null, embedded: false, started: false } satisfies TemporalTarget,
};
const outDir = resolve('bench/out/end-tail');
mkdirSync(outDir, { recursive: true });

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** Wall and CPU ms of `f`. */
async function timed<T>(f: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const c = process.cpuUsage(c0);
  return { value, wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

const pieces = ['coverage', 'report', 'join', 'sidecar', 'numbers'] as const;
const cpu = new Map<string, number[]>(pieces.map((p) => [p, []]));
console.log(`end of run on ${output} (${rollouts})`);
for (let i = 0; i < Number(values.repeat); i++) {
  const cov = await timed(() => countCoverage({ output, sidecar }, {}, 1, outDir));
  const rep = await timed(() => writeReport({ output, html: join(outDir, 'report.html') }, temporal));
  const join_ = await timed(() => joinVerdicts({ rollouts, oldSidecar: null, output }, outDir));
  const side = await timed(() => sidecarClasses(sidecar));
  const num = await timed(() =>
    Promise.resolve(
      reportData({
        join: join_.value,
        keyMetrics: {},
        paths: { output, rollouts, oldSidecar: null, sidecar, metrics: null },
        workflowId: '',
        runUrl: null,
        historyUnavailable: null,
        sidecar: side.value,
        timeline: null,
        estimateHistory: estimateHistoryOf(join_.value, REPORT_CONFIDENCE),
      }),
    ),
  );
  const runs = { coverage: cov, report: rep, join: join_, sidecar: side, numbers: num };
  for (const p of pieces) cpu.get(p)!.push(runs[p].cpu);
  console.log(
    `run ${i + 1}: ` +
      pieces.map((p) => `${p} ${runs[p].wall.toFixed(0)} ms wall / ${runs[p].cpu.toFixed(0)} ms CPU`).join(', ') +
      ` | coverage ${sha(JSON.stringify(cov.value))}, report html ${sha(readFileSync(rep.value.html, 'utf8'))}`,
  );
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`\nmedian CPU ms: ${pieces.map((p) => `${p} ${median(cpu.get(p)!).toFixed(0)}`).join(', ')}`);
console.log('(report = the whole writeReport: join, sidecar counts, numbers, history timeline, HTML)');
