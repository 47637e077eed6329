/**
 * `reverify report -o OUT [--html FILE] [--json] [--rollouts PATH]`: what changed against the
 * original run — the old verdicts (the rewards of --rollouts) against the new ones (the main
 * output), metric deltas with bootstrap intervals, agreement, failures per round, throughput and
 * latency from the run's history. Written as one self-contained HTML file (default
 * `<stem>_report.html` next to the output), the same numbers as JSON on stdout with --json.
 * `reverify run` writes it at the end of a successful run. Works from the files alone when the
 * Temporal server no longer has the run (the history part is then marked unavailable).
 */
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { writeFileAtomic } from '../io/atomic-file.js';
import { connectClient, resolveTemporal, runUiUrl, type TemporalTarget } from '../temporal/connection.js';
import { invocationsOf, runsNewestFirst } from '../temporal/run-history.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import type { RunResult, RunSpec } from '../contract/run-spec.js';
import { historyTimeline, timelineResult, type RecordedBatch } from '../report/history-timeline.js';
import { reportHtml } from '../report/html.js';
import { reportData, type ReportData } from '../report/report-data.js';
import { reportHtmlPath } from '../contract/file-names.js';
import { noiseFromFiles } from '../report/noise-files.js';
import { noiseFloorText } from '../stats/noise-floor.js';
import { keyMetricsOf, runFiles, specAndResult, type RunFiles } from '../report/run-files.js';
import { sidecarClasses } from '../report/sidecar-classes.js';
import { estimateHistoryOffThread } from '../report/estimate-history-offthread.js';
import { joinVerdicts, type VerdictJoin } from '../report/verdict-join.js';
import { reportGateLookup } from '../report/gate-numbers.js';
import { REPORT_CONFIDENCE } from '../report/paired-stats.js';
import type { GateOutcome } from '../stats/gate-check.js';
import type { GateRule } from '../stats/gate-rules.js';
import { enforceGates, gateOutcomes, gateRulesOf } from './gate-ending.js';
import { readHistory } from './history-events.js';
import { refuseAliases, type ReadFile } from '../run-checks/input-aliases.js';
import { trace } from './trace.js';
import { collectGarbage } from '../io/collect-garbage.js';

export interface ReportOptions {
  output: string;
  html?: string;
  json?: boolean;
  /** The old verdicts, when neither the history nor an earlier report names the run's --rollouts. */
  rollouts?: string;
  /** `--fail-if` rules (src/stats/gate-rules.ts), checked on the report's task-clustered statistics. */
  failIf?: string[];
}

/** A connection to reuse (`reverify run` has one), or none: the report connects itself. */
export interface ReportTemporal {
  client: Client;
  target: TemporalTarget;
}

/** What the report reads from the run's history: its spec and result, and the batches it recorded. */
interface RunHistory {
  spec: RunSpec | null;
  result: RunResult | null;
  batches: RecordedBatch[];
}

/**
 * The histories of every invocation that wrote the output (fresh, resumed after an end, extended,
 * recovered: each started the workflow again), oldest first, one run of a continue-as-new chain at
 * a time: memory holds one run's events, not the chain's, and of each run only its batches are
 * kept. The spec and result are the latest invocation's.
 */
async function readRunChain(client: Client, workflowId: string): Promise<RunHistory> {
  const batches: RecordedBatch[] = [];
  let spec: RunSpec | null = null;
  let result: RunResult | null = null;
  const invocations = await invocationsOf(client, workflowId);
  if (invocations.length === 0) throw new Error(`no run ${workflowId}`);
  for (const [i, inv] of invocations.entries()) {
    const perRun: RecordedBatch[][] = [];
    const latest = i === invocations.length - 1;
    // At 10^6 rows, five runs of ≈ 4,150 events, read while the history file is written.
    for await (const events of runsNewestFirst(client, workflowId, { collect: true, runId: inv.runIds[inv.runIds.length - 1] })) {
      const ends = specAndResult(events);
      if (latest && perRun.length === 0) result = ends.result; // the latest run's end
      if (latest) spec = ends.spec; // the invocation's first run's start, once the walk is done
      // Counts and times only (timelineResult), whatever the number of batches.
      perRun.unshift(readHistory(events).batches.map((b) => ({ ...b, invocation: i, result: timelineResult(b.result) })));
    }
    for (const run of perRun) batches.push(...run);
  }
  return { spec, result, batches };
}

/** The run's history, or why it cannot be read. Never throws: the report works without it. */
async function historyOf(
  workflowId: string,
  given?: ReportTemporal,
): Promise<{ history: RunHistory | null; why: string | null; runUrl: string | null }> {
  let close = async () => {};
  try {
    const target = given?.target ?? (await resolveTemporal());
    let client = given?.client;
    if (!client) ({ client, close } = await connectClient(target));
    try {
      const history = await readRunChain(client, workflowId);
      return { history, why: null, runUrl: runUiUrl(target, workflowId) };
    } catch {
      return { history: null, why: `the Temporal server at ${target.address} has no run ${workflowId}`, runUrl: null };
    }
  } catch (err) {
    return { history: null, why: `the Temporal server cannot be reached (${(err as Error).message.split('\n')[0]})`, runUrl: null };
  } finally {
    await close();
  }
}

/** Where the HTML report goes: --html, else `<stem>_report.html` next to the main output. */
function htmlPathOf(opts: ReportOptions, mainOutput: string): string {
  return opts.html ? resolve(opts.html) : reportHtmlPath(mainOutput);
}

/** The report must not overwrite a file it reads (src/run-checks/input-aliases.ts): one line, nothing written. */
async function refuseReportAliases(html: string, files: RunFiles, opts: ReportOptions): Promise<void> {
  const reads: ReadFile[] = [
    { role: 'runFile', flag: "the run's main output", path: files.output },
    { role: 'rollouts', flag: opts.rollouts ? '--rollouts' : "the run's --rollouts", path: files.rollouts },
    ...(files.oldSidecar ? [{ role: 'recovery' as const, flag: "the sidecar of the run's --rollouts", path: files.oldSidecar }] : []),
    { role: 'runFile', flag: "the run's failures sidecar", path: files.sidecar },
    ...(files.metrics ? [{ role: 'runFile' as const, flag: "the run's aggregate metrics file", path: files.metrics }] : []),
  ];
  const fix = opts.html ? 'choose another --html' : 'pass --html with another path';
  await refuseAliases([{ role: 'report', what: 'the HTML report', path: html, fix }], reads, {
    overwrite: true,
    resume: false,
    append: false,
  });
}

/** The report's numbers for the run writing `output`. */
export async function buildReport(opts: ReportOptions, temporal?: ReportTemporal): Promise<ReportData> {
  return (await reportAndJoin(opts, temporal)).data;
}

/** The report's numbers and the verdict join they come from (the gates read its paired rows). */
async function reportAndJoin(opts: ReportOptions, temporal?: ReportTemporal): Promise<{ data: ReportData; join: VerdictJoin }> {
  const output = resolve(opts.output);
  const workflowId = workflowIdForOutput(output);
  const history = await historyOf(workflowId, temporal);
  // What the history's pages left behind goes before the join's sort starts filling the heap.
  collectGarbage();
  trace('report: history read');
  const files = runFiles(output, history.history ?? { spec: null, result: null }, opts.rollouts && resolve(opts.rollouts));
  await refuseReportAliases(htmlPathOf(opts, files.output), files, opts);
  const spec = history.history?.spec;
  const order = spec?.order === 'random' ? { kind: 'random' as const, seed: spec.orderSeed ?? 0 } : { kind: 'file' as const };
  const join = await joinVerdicts(files, tmpdir(), { order });
  collectGarbage(); // the sort's records and buffers, before the statistics allocate theirs
  trace('report: verdicts joined');
  // The live estimate's replay, on a thread of its own while the other numbers are made here.
  const replay = estimateHistoryOffThread(join, spec?.confidence ?? REPORT_CONFIDENCE);
  const numbers = reportData({
    join,
    keyMetrics: await keyMetricsOf(files.metrics),
    paths: files,
    workflowId,
    runUrl: history.runUrl,
    historyUnavailable: history.why,
    sidecar: await sidecarClasses(files.sidecar),
    timeline: history.history ? historyTimeline(history.history.batches) : null,
    noise: await noiseFromFiles(files.output),
    estimateHistory: null,
  });
  const data = { ...numbers, estimateHistory: await replay };
  trace('report: numbers made');
  return { data, join };
}

/** Builds the report, writes its HTML (atomically), and returns where. */
export async function writeReport(
  opts: ReportOptions,
  temporal?: ReportTemporal,
): Promise<{ data: ReportData; html: string; join: VerdictJoin }> {
  const { data, join } = await reportAndJoin(opts, temporal);
  const html = htmlPathOf(opts, data.output);
  await writeFileAtomic(html, reportHtml(data));
  trace('report: html written');
  return { data, html, join };
}

/** The old keys missing from the main output, listed (the first MISSING_LISTED_MAX) and counted. */
export function missingLines(data: ReportData): string[] {
  const t = data.totals;
  if (t.oldOnly === 0) return [];
  const more = t.oldOnly > t.missingKeys.length ? `, and ${t.oldOnly - t.missingKeys.length} more` : '';
  return [`Missing from the main output: ${t.oldOnly} key(s) of --rollouts: ${t.missingKeys.join(', ')}${more}`];
}

/** Each invocation's throughput over its own active time (the history's batches). */
export function throughputLines(data: ReportData): string[] {
  const inv = data.timeline?.invocations ?? [];
  if (inv.length === 0) return [];
  const each = inv.map(
    (v) => `invocation ${v.invocation}: ${v.rows} rows in ${v.activeSeconds.toFixed(1)} s active (${v.rowsPerSecond ?? '–'} rows/s)`,
  );
  return [`Throughput: ${each.join('; ')}`];
}

/** `report --fail-if`: the rules on the report's task-clustered statistics (src/report/gate-numbers.ts). */
function reportGates(rules: GateRule[], join: VerdictJoin): GateOutcome[] {
  if (rules.length === 0) return [];
  const agents = join.agents.map((a) => a.agent);
  return gateOutcomes(rules, reportGateLookup(join, REPORT_CONFIDENCE), agents, 'the output');
}

const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(4)}`;

/** The paired difference over all agents, clustered by task, and the clustered McNemar test (paired-stats.ts). */
export function pairedLines(data: ReportData): string[] {
  const { all, confidence } = data.paired;
  if (!all.delta) return [];
  const d = all.delta;
  const m = all.mcnemar;
  const test =
    m.statistic === null ? 'no flips one way more than the other' : `X² ${m.statistic.toFixed(2)}, p ${m.pValue!.toPrecision(2)}`;
  return [
    `Δ mean reward (new − old, all agents): ${signed(d.mean)}, ${confidence * 100} % CI clustered by task [${signed(d.lo)}, ${signed(d.hi)}] (SE ${d.se.toFixed(4)}, ${d.clusters} tasks); clustered McNemar on pass/fail flips: ${test}`,
  ];
}

export async function reportCommand(opts: ReportOptions, out: (line: string) => void, err: (line: string) => void): Promise<void> {
  // A bad rule is said before anything is read (exit 1).
  const rules = gateRulesOf(opts.failIf);
  const { data, html, join } = await writeReport(opts);
  const gates = reportGates(rules, join);
  const t = data.totals;
  const lines = [
    `Report: ${html}`,
    `Flips: ${t.flips.up} 0→1, ${t.flips.down} 1→0, ${t.flips.changed} changed of ${t.paired} rows with both verdicts; Cohen's κ ${t.kappa === null ? '–' : t.kappa.toFixed(3)}`,
    ...pairedLines(data),
    ...missingLines(data),
    ...(data.noise ? [`Judge noise: ${noiseFloorText(data.noise, data.noise.sampled)} (${data.noise.path})`] : []),
    ...throughputLines(data),
    ...(data.historyUnavailable ? [`History part unavailable: ${data.historyUnavailable}`] : []),
  ];
  if (opts.json) {
    lines.forEach(err);
    out(JSON.stringify(gates.length > 0 ? { ...data, gates } : data));
  } else lines.forEach(out);
  // A rule that holds ends the command with its line (exit 5).
  enforceGates(gates, opts.json ? err : out);
}
