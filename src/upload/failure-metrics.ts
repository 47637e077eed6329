/**
 * The run's `failure_export_metrics()` (src/contract/failure-export-metrics.ts) counted from its
 * files, for every tracker upload (MLflow here; W&B uses the same function): the one place that
 * computes them. The cap and the timeout policy are the ones saved with the run (its coverage
 * file), never the exporting process's; a run without a coverage file (written by another tool)
 * is counted under `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS` (default 3), as NeMo Gym 0.7.0 would count it.
 */
import { dirname } from 'node:path';
import { maxRolloutAttempts } from '../contract/attempts.js';
import { capOf } from '../contract/coverage.js';
import { failureExportMetrics } from '../contract/failure-export-metrics.js';
import { coveragePath, sidecarPath } from '../contract/file-names.js';
import { readCoverageFile } from '../io/coverage-file.js';
import { countCoverage } from '../planning/coverage-scan.js';
import type { MetricValue } from './metric-names.js';

/** The failure export metrics of the run whose main output is `output`, in export order. */
export async function failureMetricsOfRun(output: string): Promise<Map<string, MetricValue>> {
  const saved = await readCoverageFile(coveragePath(output));
  const cap = saved ? capOf(saved) : maxRolloutAttempts(process.env).value;
  const rules = { retryTerminalTimeouts: saved?.retry_terminal_timeouts === true };
  const counts = await countCoverage({ output, sidecar: sidecarPath(output) }, rules, cap, dirname(output));
  return new Map(Object.entries(failureExportMetrics(counts)));
}
