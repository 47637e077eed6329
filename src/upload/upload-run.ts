/**
 * The upload of a run to MLflow, in NeMo Gym 0.7.0's order (spec §4.12, §3.9): open (experiment,
 * run, config), the rollouts table before aggregation, the metrics after it (aggregate metrics,
 * then coverage), and the run marked FINISHED. Each step is its own activity in a run
 * (activities/upload-results.ts) and `reverify upload` calls them in turn. The secret (the token)
 * is read here, from the `--config` files or `MLFLOW_TRACKING_TOKEN`; callers pass only paths.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hideSecrets } from '../contract/secrets.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { failureMetricsOfRun } from './failure-metrics.js';
import { CONFIG_ARTIFACT, configArtifactText, configParams } from './global-config.js';
import { coverageMetrics, exportedMetrics, mlflowEntries, type MetricValue } from './metric-names.js';
import { MlflowClient, type RunInfo } from './mlflow-client.js';
import { writeRolloutsTable } from './rollouts-table.js';
import { ROLLOUTS_ARTIFACT } from './table-json.js';
import { loadUploadConfig, MLFLOW_TOKEN_ENV, type UploadConfig } from './upload-config.js';

/** What an upload step needs: paths and non-secret options only (this goes into workflow history). */
export interface UploadRequest {
  /** The main output. */
  output: string;
  /** `<out>_aggregate_metrics.json`. */
  metrics: string;
  /** The `--config` files (absolute): the exporter keys and the token are read from them. */
  configs: string[];
  /** The run's options under NeMo Gym's config keys, added to the exported config. */
  options: Record<string, unknown>;
}

/** The MLflow run the steps after the first log to (ids only). */
export type UploadTarget = RunInfo;

async function clientFor(req: UploadRequest): Promise<{ client: MlflowClient; config: UploadConfig }> {
  const config = await loadUploadConfig(req.configs);
  if (config.mlflow === null)
    throw new Error('MLflow is not configured in --config (mlflow_tracking_uri, mlflow_experiment_name, mlflow_run_name)');
  return { client: new MlflowClient(config.mlflow.trackingUri, config.token ?? process.env[MLFLOW_TOKEN_ENV] ?? null), config };
}

/** The config every tracker logs: the `--config` files with the run's options over them, secrets masked. */
export function exportedConfig(config: UploadConfig, req: UploadRequest): Record<string, unknown> {
  return hideSecrets({ ...config.data, ...req.options });
}

/** Opens the MLflow run: experiment (created if missing), run named `mlflow_run_name`, the config. */
export async function openUpload(req: UploadRequest): Promise<UploadTarget> {
  const { client, config } = await clientFor(req);
  const experimentId = await client.experimentId(config.mlflow!.experimentName);
  const run = await client.createRun(experimentId, config.mlflow!.runName);
  const exported = exportedConfig(config, req);
  await client.uploadArtifactText(run, CONFIG_ARTIFACT, configArtifactText(exported));
  await client.logBatch(run.runId, { params: configParams(exported) });
  return run;
}

/** Uploads the sorted, sanitised rows of the main output as `rollouts.json`; returns the row count. */
export async function uploadRollouts(req: UploadRequest, run: UploadTarget, onRows?: (n: number) => void): Promise<number> {
  const { client } = await clientFor(req);
  return withScratchDir(tmpdir(), 'reverify-upload-', async (dir) => {
    const table = join(dir, ROLLOUTS_ARTIFACT);
    const rows = await writeRolloutsTable(req.output, table, dir, { onRows });
    await client.uploadArtifactFile(run, ROLLOUTS_ARTIFACT, table);
    await rm(table, { force: true });
    const tags = (await client.getRun(run.runId)).tags;
    const logged = JSON.parse(tags['mlflow.loggedArtifacts'] ?? '[]') as Array<{ path: string; type: string }>;
    if (!logged.some((a) => a.path === ROLLOUTS_ARTIFACT && a.type === 'table')) {
      logged.push({ path: ROLLOUTS_ARTIFACT, type: 'table' });
      await client.setTag(run.runId, 'mlflow.loggedArtifacts', pyJsonDumps(logged));
    }
    return rows;
  });
}

/** Python's `json.dumps` of the logged-artifacts list (`", "` and `": "` separators). */
function pyJsonDumps(list: Array<{ path: string; type: string }>): string {
  return `[${list.map((a) => `{"path": ${JSON.stringify(a.path)}, "type": ${JSON.stringify(a.type)}}`).join(', ')}]`;
}

/** The aggregate metrics of the file (absent file: none), as NeMo Gym exports them. */
async function aggregateMetrics(path: string): Promise<Map<string, MetricValue>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw err;
  }
  const entries = JSON.parse(text) as unknown;
  return exportedMetrics(Array.isArray(entries) ? entries : []);
}

/**
 * Logs the aggregate metrics, then the coverage metrics and the failure export metrics
 * (src/upload/failure-metrics.ts), and marks the run FINISHED; returns how many were logged.
 */
export async function uploadMetrics(req: UploadRequest, run: UploadTarget, coverage: { scored: number; missing: number }): Promise<number> {
  const { client } = await clientFor(req);
  let logged = 0;
  const all = [
    await aggregateMetrics(req.metrics),
    coverageMetrics(coverage.scored, coverage.missing),
    await failureMetricsOfRun(req.output),
  ];
  for (const metrics of all) {
    const entries = mlflowEntries(metrics);
    await client.logBatch(run.runId, entries);
    logged += entries.metrics.length + entries.tags.length;
  }
  await client.finishRun(run.runId);
  return logged;
}
