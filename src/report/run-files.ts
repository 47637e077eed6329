/**
 * Where a run's files are, for its report: from its workflow history when the Temporal server still
 * has it (the spec's --rollouts, the result's output paths), else from the files next to the output
 * (the `unsafe_` output if that is the one on disk, the --rollouts path recorded by an earlier report).
 */
import { existsSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { ConfigError } from '../contract/errors.js';
import { nonFiniteAsNull } from '../contract/json-non-finite.js';
import { aggregateMetricsPath, prefixedOutputPath, reportHtmlPath, sidecarPath } from '../contract/file-names.js';
import type { RunResult, RunSpec } from '../contract/run-spec.js';
import { jsonFileArrayItems } from '../io/json-array-items.js';
import { jsonSpanMembers, type ByteSpan } from '../io/json-file-members.js';
import { readRange } from '../io/read-range.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface RunFiles {
  output: string;
  rollouts: string;
  /**
   * A `--judge-failed-only` run's input rows: the failures sidecar of its --rollouts. Their rewards,
   * where present, are the old verdicts of the keys --rollouts lacks. Null for other runs.
   */
  oldSidecar: string | null;
  sidecar: string;
  metrics: string | null;
}

/** The run's spec and result as its history records them (the first start event, the completion). */
export function specAndResult(events: HistoryEvent[]): { spec: RunSpec | null; result: RunResult | null } {
  const first = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const spec = first ? defaultPayloadConverter.fromPayload<RunSpec>(first) : null;
  const done = events.find((e) => e.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes?.result
    ?.payloads?.[0];
  const result = done ? defaultPayloadConverter.fromPayload<RunResult>(done) : null;
  return { spec, result };
}

/** The old-verdict files an earlier report of this output recorded in its data, if any. */
function earlierReport(mainOutput: string): { rollouts: string; oldSidecar: string | null } | null {
  const html = reportHtmlPath(mainOutput);
  if (!existsSync(html)) return null;
  const m = /<script id="report-data" type="application\/json">([^<]*)<\/script>/.exec(readFileSync(html, 'utf8'));
  if (!m) return null;
  try {
    const data = JSON.parse(m[1]) as { rollouts?: unknown; oldSidecar?: unknown };
    if (typeof data.rollouts !== 'string') return null;
    return { rollouts: data.rollouts, oldSidecar: typeof data.oldSidecar === 'string' ? data.oldSidecar : null };
  } catch {
    return null;
  }
}

/**
 * The files of the run writing `output` (absolute). `rollouts` (the report's own --rollouts) wins;
 * then the history's; then an earlier report's. One clear error when the output or --rollouts is unknown.
 */
export function runFiles(output: string, history: { spec: RunSpec | null; result: RunResult | null }, rollouts?: string): RunFiles {
  const fromResult = history.result?.outputs.output;
  const guessed = [output, prefixedOutputPath(output, 'unsafe_')].find((p) => existsSync(p));
  const main = fromResult && existsSync(fromResult) ? fromResult : guessed;
  if (!main) throw new ConfigError(`no main output at '${output}' (nor an unsafe_ one): give the run's --output`);
  if (history.spec && !history.spec.rolloutsPath && !rollouts)
    throw new ConfigError(
      `the run writing '${output}' read ATIF trajectories, which carry no old rewards: give --rollouts with a JSONL of the old verdicts`,
    );
  const earlier = history.spec ? null : earlierReport(main);
  const old = rollouts ?? (history.spec?.rolloutsPath || null) ?? earlier?.rollouts;
  if (!old)
    throw new ConfigError(
      `the Temporal server has no run for '${output}' and no earlier report names its --rollouts: pass --rollouts <path>`,
    );
  if (!existsSync(old)) throw new ConfigError(`the run's --rollouts '${old}' does not exist any more: pass --rollouts <path>`);
  const metrics = history.result ? history.result.metricsPath : aggregateMetricsPath(main);
  const recovery = history.spec?.judgeFailedOnly ? sidecarPath(history.spec.rolloutsPath) : (earlier?.oldSidecar ?? null);
  return {
    output: main,
    rollouts: old,
    oldSidecar: recovery && existsSync(recovery) ? recovery : null,
    sidecar: history.result?.outputs.sidecar ?? sidecarPath(main),
    metrics: metrics && existsSync(metrics) ? metrics : null,
  };
}

/**
 * Agent name -> key_metrics of the aggregate metrics file (an array of per-agent entries). Only each
 * entry's `agent_ref` and `key_metrics` are parsed: the file's `group_level_metrics` (one entry per
 * task, hundreds of MB at 10^6 rows) are stepped over on disk, so memory is flat in the number of
 * rows. A file written before non-finite numbers were written `null` may hold `NaN`: read as null.
 * A file that still does not parse leaves the key metrics out; the report is made all the same
 * (whether the run completed is its history's and coverage's to say, not this file's).
 */
export async function keyMetricsOf(path: string | null): Promise<Record<string, Record<string, unknown>>> {
  if (!path) return {};
  const out: Record<string, Record<string, unknown>> = {};
  try {
    const items = await jsonFileArrayItems(path);
    const fh = await open(path, 'r');
    try {
      const parse = async (span: ByteSpan | undefined): Promise<unknown> =>
        span && JSON.parse(nonFiniteAsNull(await readRange(fh, span.start, span.end - span.start)));
      for (const item of items) {
        const members = await jsonSpanMembers(fh, item).catch(() => new Map<string, ByteSpan>());
        const name = ((await parse(members.get('agent_ref'))) as { name?: unknown } | null | undefined)?.name;
        if (typeof name === 'string' && name)
          out[name] = ((await parse(members.get('key_metrics'))) as Record<string, unknown> | null) ?? {};
      }
    } finally {
      await fh.close();
    }
  } catch {
    return {};
  }
  return out;
}
