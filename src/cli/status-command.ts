import { WorkflowNotFoundError } from '@temporalio/client';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { coveragePath } from '../contract/file-names.js';
import { connectClient, resolveTemporal, runUiUrl } from '../temporal/connection.js';
import { runDetailsUiUrl } from '../temporal/dev-server/index.js';
import { invocationsOf } from '../temporal/run-history.js';
import { outputScopeLine, type InvocationFigures } from './output-scope.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { estimateLines } from '../contract/estimate-text.js';
import type { NoiseSampleView } from '../contract/run-result.js';
import { stoppingText } from '../contract/stop-rules.js';
import { duration } from './progress-view.js';
import { RetryNotices } from './retry-notices.js';
import { runReport, type RunReport } from './run-report.js';
import { coverageLines, coverageNow, previewLines, previewResume } from './coverage-view.js';
import type { PolicyFlags } from './saved-policy.js';
import { unresolvedLines, unresolvedRejudgments, unsettledBatches } from './unresolved-rejudgments.js';

/** How long `status` watches a live run for its rate. */
const RATE_SAMPLE_MS = 2000;

/** A live run's lines: phase, counts, rate, ETA, concurrency, paused, per agent. */
function liveLines(r: RunReport): string[] {
  const p = r.live;
  if (!p) return ['Progress: no worker answered the progress query (the run waits for one: see below)'];
  const rate = p.ratePerSecond === null ? '' : `, ${p.ratePerSecond} rows/s, ETA ${p.etaSeconds === null ? '?' : duration(p.etaSeconds)}`;
  const limit = p.effectiveConcurrency < p.concurrency ? `${p.effectiveConcurrency} (ceiling ${p.concurrency})` : String(p.concurrency);
  const paused = p.budgetPaused
    ? ', PAUSED: request budget spent (reverify control --max-requests N)'
    : p.paused
      ? ', PAUSED (reverify control --unpause)'
      : '';
  const requests = p.requests
    ? [
        `Requests: ${p.requests.used}${p.requests.max === null ? '' : `/${p.requests.max}`} /verify requests made${p.requests.max === null ? '' : ' (used/--max-requests)'}`,
      ]
    : [];
  const stopped = p.stoppedEarly ? `, ${stoppingText(p.stoppedEarly, p.stoppedEarly.batchesInFlight)}` : '';
  return [
    `Phase: ${p.phase}, ${p.oldestRound === undefined ? `round ${p.round}` : `rounds ${p.oldestRound}–${p.round}`}${paused}${stopped}`,
    `Progress: ${p.finished}/${p.planned} attempts: ${p.done} scored, ${p.failed} to the failures sidecar, ${p.dropped} not persisted, ${p.inFlight} in flight${rate}`,
    `Concurrency: ${limit}`,
    ...requests,
    ...Object.entries(p.perAgent)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([agent, c]) => `  ${agent}: ${c.done} scored, ${c.failed} failed, ${c.dropped} not persisted`),
    ...(p.estimate ? estimateLines(p.estimate) : []),
    ...(p.noise ? [noiseLine(p.noise)] : []),
  ];
}

/** The judge noise floor (`--noise-sample`), or how far its sample is. */
function noiseLine(n: NoiseSampleView): string {
  return n.text === null
    ? `Judge noise: ${n.sampled} of ${n.requested} row(s) re-judged so far (${n.path})`
    : `Judge noise: ${n.text} (${n.path})`;
}

/** A completed run's lines: outcome, counts, key metrics, paths. */
function resultLines(r: RunReport): string[] {
  const s = r.result!;
  const lines = [`Outcome: ${s.outcome} (exit status ${s.exitStatus})`];
  const k = s.rollouts;
  lines.push(
    `Rollouts: ${k.planned ?? '?'} planned: ${k.scored} scored, ${k.missing ?? '?'} still missing from the score after ${s.attempts.rounds} round(s), ` +
      `${k.notPersisted} not persisted (${s.attempts.total} attempts, ${s.attempts.inSidecar} of them in the failures sidecar)`,
  );
  for (const [agent, a] of Object.entries(s.agents ?? {}))
    lines.push(`  ${agent}: ${a.planned} planned: ${a.scored} scored, ${a.missing} still missing, ${a.notPersisted} not persisted`);
  for (const [agent, metrics] of Object.entries(s.keyMetrics)) lines.push(`Key metrics for ${agent}: ${JSON.stringify(metrics)}`);
  if (s.estimate) lines.push(...estimateLines(s.estimate));
  if (s.noise) lines.push(noiseLine(s.noise));
  lines.push(`Re-verified rollouts: ${s.output}`, `Failures: ${s.sidecar}`, `Aggregate metrics: ${s.metrics ?? 'None'}`);
  if (s.aggregationError) lines.push(`Metrics not computed: ${s.aggregationError}`);
  return lines;
}

/** What the run shown (the latest invocation) did on its own. */
function invocationFigures(r: RunReport): InvocationFigures | null {
  if (r.live) return { planned: r.live.planned, scored: r.live.done, unit: 'attempts' };
  if (r.result) return { planned: r.result.rollouts.planned, scored: r.result.rollouts.scored, unit: 'rollouts' };
  return null;
}

/** The report as lines for people: the output across every invocation first, then the latest invocation's own state. */
export function statusLines(r: RunReport): string[] {
  const when = r.closed ? `${r.started} to ${r.closed}` : `since ${r.started}`;
  const lines = [`Run ${r.workflowId}: ${r.state} (${when}, ${duration(r.durationSeconds)})`];
  if (r.output) lines.push(`Output: ${r.output}`);
  if (r.coverage) lines.push(outputScopeLine(r.coverage, invocationFigures(r), r.invocations ?? null));
  if (r.state === 'RUNNING') {
    lines.push(...liveLines(r));
    if (r.workersPolling === 0)
      lines.push(
        `Workers: none polls task queue '${r.taskQueue}': the run waits. Run the same \`reverify run\` command again (it attaches with a worker), or start \`reverify worker\` with this TEMPORAL_ADDRESS`,
      );
    else if (r.workersPolling !== null) lines.push(`Workers: ${r.workersPolling} polling task queue '${r.taskQueue}'`);
  }
  if (r.result) lines.push(...resultLines(r));
  if (r.failure) lines.push(r.failure);
  if (r.state === 'CANCELLED')
    lines.push(
      'Cancelled: the rows it committed are kept in its output and sidecar; to continue, run the same `reverify run` command with --resume',
    );
  // A live run's counts are on its User Metadata tab (Current Details), not on the page the UI opens first.
  if (r.uiUrl) lines.push(`Temporal UI: ${r.uiUrl}${r.state === 'RUNNING' ? ` (live counts: ${runDetailsUiUrl(r.uiUrl, r.runId)})` : ''}`);
  return lines;
}

/**
 * `reverify status -o <out.jsonl> [--json]`: the state of the run writing that output. Live: phase,
 * counts, rate and ETA (sampled over 2 s), concurrency, paused, the workers polling its task queue
 * and what to do if none does, why activities are being retried. Finished: outcome, duration,
 * counts, key metrics, paths. Both: the UI link.
 */
export async function statusCommand(
  output: string,
  out: (line: string) => void,
  opts: { json?: boolean; extendAttempts?: number } & PolicyFlags = {},
): Promise<RunReport | null> {
  const { extendAttempts, retryTerminalTimeouts, dispatchLongestFirst } = opts;
  if (extendAttempts !== undefined || retryTerminalTimeouts !== undefined || dispatchLongestFirst !== undefined)
    return previewCommand(output, { extension: extendAttempts, retryTerminalTimeouts, dispatchLongestFirst }, out, opts.json === true);
  const target = await resolveTemporal();
  const workflowId = workflowIdForOutput(resolve(output));
  const { client, close } = await connectClient(target);
  try {
    const report = await runReport(client, workflowId, runUiUrl(target, workflowId), { sampleMs: RATE_SAMPLE_MS, pollers: true }).catch(
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError)
          throw new ConfigError(
            `no run found for output '${resolve(output)}' (workflow ${workflowId}) on ${target.address}: check the path, or \`reverify list\``,
          );
        throw err;
      },
    );
    // The coverage counted from the files now (see coverage-view.ts for why not a query). A coverage
    // file that cannot be read is said in one line; the rest of the report stands.
    let coverageProblem: string | null = null;
    report.coverage = await coverageNow(output).then(
      (now) => now?.coverage ?? null,
      (err: unknown) => {
        if (!(err instanceof ConfigError)) throw err;
        coverageProblem = `Coverage: ${err.message}`;
        return null;
      },
    );
    report.invocations = (await invocationsOf(client, workflowId).catch(() => [])).length || undefined;
    // Re-judgments admitted and not settled, from the current run's history (a run that completed has none).
    if (report.state !== 'COMPLETED') {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      report.unresolvedRejudgments = await unresolvedRejudgments(unsettledBatches(history.events ?? []));
    }
    if (opts.json) {
      out(JSON.stringify(report));
      return report;
    }
    statusLines(report).forEach((line) => out(line));
    unresolvedLines(report.unresolvedRejudgments ?? [], report.state === 'RUNNING').forEach((line) => out(line));
    if (report.coverage)
      coverageLines(
        { file: coveragePath(report.coverage.reporting.output), coverage: report.coverage },
        report.state === 'RUNNING',
      ).forEach((l) => out(l));
    if (coverageProblem) out(coverageProblem);
    if (report.state === 'RUNNING') {
      // Why activities are being retried (a verifier outage), each distinct failure once.
      const desc = await client.workflow.getHandle(workflowId).describe();
      new RetryNotices().take(desc.raw.pendingActivities ?? [], Date.now()).forEach((line) => out(line));
    }
    return report;
  } finally {
    await close();
  }
}

/**
 * `reverify status -o OUT --extend-attempts N` and/or a policy override (`--[no-]retry-terminal-timeouts`,
 * `--[no-]dispatch-longest-first`): what `run --resume` with them would run differently, from the
 * files and what the run saved alone (no Temporal server needed); writes nothing.
 */
async function previewCommand(
  output: string,
  change: { extension?: number } & PolicyFlags,
  out: (line: string) => void,
  json: boolean,
): Promise<null> {
  const extension = change.extension ?? 0;
  if (change.extension !== undefined && (!Number.isInteger(extension) || extension < 1))
    throw new ConfigError(`--extend-attempts must be an integer >= 1, got ${extension}`);
  const preview = await previewResume(output, { ...change, extension });
  if (preview === null)
    throw new ConfigError(
      `no coverage file beside '${resolve(output)}' (it is written by every run of this version): nothing saved to preview; check the path`,
    );
  if (json) out(JSON.stringify(preview));
  else previewLines(preview).forEach((line) => out(line));
  return null;
}
