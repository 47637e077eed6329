/**
 * `reverify upload -o OUT --config PATH...`: uploads a finished run to the MLflow tracker its
 * `--config` names, as the run's upload phase does (src/upload/upload-run.ts), in this process:
 * the rollouts table (unless `upload_rollouts: false`), the aggregate metrics of
 * `<stem>_aggregate_metrics.json` (if there) and the coverage metrics read from the files. The
 * files are only read. A failure is one line and exit 2.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { redactUserinfo } from '../contract/secrets.js';
import { outputPathsFor } from '../contract/output-paths.js';
import { requireReadableFile } from './build-spec.js';
import { coverageFromFiles } from '../upload/coverage-from-files.js';
import { loadUploadConfig, wandbRefusal } from '../upload/upload-config.js';
import { openUpload, uploadMetrics, uploadRollouts, type UploadRequest } from '../upload/upload-run.js';

export class UploadFailedError extends Error {}

export interface UploadCommandOptions {
  output: string;
  configs: string[];
}

export async function uploadCommand(o: UploadCommandOptions, out: (line: string) => void): Promise<void> {
  const output = await requireReadableFile('--output', o.output);
  if (o.configs.length === 0) throw new ConfigError('reverify upload needs --config: the NeMo Gym config with the mlflow_* keys');
  const config = await loadUploadConfig(o.configs);
  if (config.wandbKeys.length > 0) out(wandbRefusal(config.wandbKeys));
  if (config.mlflow === null)
    throw new ConfigError(
      `no MLflow tracker in --config ${o.configs.join(', ')}: set mlflow_tracking_uri, mlflow_experiment_name and mlflow_run_name (mlflow_tracking_token optional)`,
    );
  const paths = outputPathsFor(output, '');
  const req: UploadRequest = {
    output,
    metrics: paths.metrics,
    configs: o.configs.map((c) => resolve(c)),
    options: { output_jsonl_fpath: output, upload_rollouts: config.uploadRollouts },
  };
  let step = 'opening the run';
  try {
    const run = await openUpload(req);
    step = 'rollouts.json';
    const rows = config.uploadRollouts ? await uploadRollouts(req, run) : null;
    step = 'metrics';
    const metrics = await uploadMetrics(req, run, await coverageFromFiles(output, paths.sidecar));
    out(uploadedLine(run.runId, rows, metrics, config.mlflow.trackingUri));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new UploadFailedError(`MLflow upload failed (${step}): ${redactUserinfo((err as Error).message)}`);
  }
}

/** The line that says where the upload went. */
export function uploadedLine(runId: string, rows: number | null, metrics: number | null, trackingUri?: string): string {
  const what = [rows === null ? null : `${rows} rollouts in rollouts.json`, metrics === null ? null : `${metrics} metrics`]
    .filter(Boolean)
    .join(', ');
  return `Uploaded to MLflow${trackingUri ? ` at ${redactUserinfo(trackingUri)}` : ''}: run ${runId}${what ? ` (${what})` : ''}`;
}
