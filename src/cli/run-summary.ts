/** What `reverify run` prints when its run has ended: the summary, and the report written beside the outputs. */
import { outputScopeLine } from './output-scope.js';
import { coverageReport } from '../contract/coverage-report.js';
import { coverageBlock } from '../contract/coverage-block.js';
import { coveragePath } from '../contract/file-names.js';
import { keyMetricsFor } from '../contract/messages.js';
import type { RunResult, RunSpec } from '../contract/run-spec.js';
import { perAgentLines } from './end-summary.js';
import type { Followed } from './follow-run.js';
import type { ReportTemporal } from './report-command.js';
import type { RunCommandIo } from './run-command.js';
import { uploadedLine } from './upload-command.js';
import { wandbUploadedLine } from '../upload/wandb-upload.js';

/**
 * What this run did, counted in rollouts (keys), not attempts: scored, still missing from the score
 * after every round (their last attempt is in the sidecar), not persisted; then the attempts.
 */
export function rolloutsLine(result: RunResult): string {
  const seeded = result.seeded > 0 ? `; ${result.seeded} successes seeded` : '';
  const rounds = result.rounds > 1 ? ` after ${result.rounds} rounds` : '';
  if (result.keys === undefined || result.missing === undefined) {
    // A run of an earlier version: attempts only.
    return `Rows: ${result.planned} verified${rounds}: ${result.done} to the main output, ${result.failed} to the failures sidecar, ${result.dropped} not persisted${seeded}`;
  }
  return (
    `Rollouts: ${result.keys} planned: ${result.done} scored, ${result.missing} still missing from the score${rounds}, ` +
    `${result.dropped} not persisted (${result.planned} attempts, ${result.failed} of them in the failures sidecar)${seeded}`
  );
}

/** Prints the end-of-run summary (spec §4.13, §4.14), NeMo Gym 0.7.0's coverage report and the UI link. */
/** The warning of a failed upload: the outputs are complete, and the command that uploads them later. */
export function uploadWarningLine(warning: string, output: string, to: 'mlflow' | 'wandb' | null): string {
  return `Warning: ${warning}; the outputs are complete: \`reverify upload -o ${output} --config ...${to ? ` --to ${to}` : ''}\` uploads them later`;
}

export function printSummary({ result, routed }: Followed, uiUrl: string | null, io: RunCommandIo, reportLine: string | null = null): void {
  for (const { agent, keyMetrics } of result.keyMetrics) {
    io.out(keyMetricsFor(agent));
    io.out(JSON.stringify(keyMetrics, null, 2));
  }
  io.out(rolloutsLine(result));
  // The output across every invocation that wrote it (a --resume plans only what was missing).
  if (result.coverage) io.out(outputScopeLine(result.coverage, { planned: result.keys ?? null, scored: result.done, unit: 'rollouts' }));
  perAgentLines(result).forEach((line) => io.out(line));
  io.out(`Re-verified rollouts: ${result.outputs.output}`);
  io.out(`Failures: ${result.outputs.sidecar}`);
  io.out(`Aggregate metrics: ${result.metricsPath ?? 'None'}`);
  if (result.noise?.text) io.out(`Judge noise: ${result.noise.text} (${result.noise.path})`);
  if (typeof result.scored === 'number' && result.missing !== undefined)
    coverageReport(result.scored, result.missing, routed, result.outputs.sidecar).forEach((line) => io.out(line));
  const { upload, wandb } = result;
  if (upload?.warning) io.out(uploadWarningLine(upload.warning, result.outputs.output, wandb ? 'mlflow' : null));
  else if (upload?.runId) io.out(uploadedLine(upload.runId, upload.rows, upload.metrics));
  if (wandb?.warning) io.out(uploadWarningLine(wandb.warning, result.outputs.output, upload ? 'wandb' : null));
  else if (wandb?.uploaded) io.out(wandbUploadedLine(wandb.uploaded));
  if (result.coverage) coverageBlock(result.coverage, coveragePath(result.outputs.output)).forEach((line) => io.out(line));
  if (uiUrl) io.out(`Temporal UI: ${uiUrl}`);
  if (reportLine) io.out(reportLine);
  if (result.forceWarning) io.out(result.forceWarning);
}

/**
 * The run report (`reverify report`) of a run that ended well, written next to the outputs: its
 * line for the summary. A report that fails is a warning line, nothing more. ATIF inputs carry no
 * old rewards: no report (`reverify report --rollouts` can make one).
 */
export async function endReport(
  spec: RunSpec,
  result: RunResult,
  temporal: ReportTemporal,
  reportModule: Promise<typeof import('./report-command.js')>,
): Promise<string | null> {
  if (spec.atif || result.aggregationError) return null;
  const output = spec.outputPath;
  try {
    const { html } = await (await reportModule).writeReport({ output }, temporal);
    return `Report: ${html}`;
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    return `Warning: the run report was not written (${why}); \`reverify report -o ${output}\` writes it`;
  }
}
