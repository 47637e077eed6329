/**
 * `reverify upload -o OUT --config PATH... [--to mlflow|wandb]`: uploads a finished run to the
 * trackers its `--config` names (MLflow: src/upload/upload-run.ts; W&B: src/upload/wandb-upload.ts),
 * as the run's upload does, in this process: the rollouts table (unless `upload_rollouts: false`),
 * the aggregate metrics of `<stem>_aggregate_metrics.json` (if there) and the coverage metrics read
 * from the files. The files are only read. A failure is one line and exit 2 (the other tracker is
 * still uploaded).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { redactUserinfo } from '../contract/secrets.js';
import { outputPathsFor } from '../contract/output-paths.js';
import { requireReadableFile } from './build-spec.js';
import { coverageFromFiles } from '../upload/coverage-from-files.js';
import { loadUploadConfig, wandbIncomplete, type UploadConfig } from '../upload/upload-config.js';
import { openUpload, uploadMetrics, uploadRollouts, type UploadRequest } from '../upload/upload-run.js';
import { uploadToWandb, wandbFailure, wandbUploadedLine } from '../upload/wandb-upload.js';

export class UploadFailedError extends Error {}

/** The trackers `--to` chooses from. */
export const TRACKERS = ['mlflow', 'wandb'] as const;
export type Tracker = (typeof TRACKERS)[number];

export interface UploadCommandOptions {
  output: string;
  configs: string[];
  /** Only this tracker (default: every tracker the config names). */
  to?: Tracker;
}

async function uploadMlflow(req: UploadRequest, config: UploadConfig, coverage: { scored: number; missing: number }): Promise<string> {
  let step = 'opening the run';
  try {
    const run = await openUpload(req);
    step = 'rollouts.json';
    const rows = config.uploadRollouts ? await uploadRollouts(req, run) : null;
    step = 'metrics';
    const metrics = await uploadMetrics(req, run, coverage);
    return uploadedLine(run.runId, rows, metrics, config.mlflow!.trackingUri);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new UploadFailedError(`MLflow upload failed (${step}): ${redactUserinfo((err as Error).message)}`);
  }
}

export async function uploadCommand(o: UploadCommandOptions, out: (line: string) => void): Promise<void> {
  const output = await requireReadableFile('--output', o.output);
  if (o.configs.length === 0)
    throw new ConfigError('reverify upload needs --config: the NeMo Gym config with the mlflow_* or wandb_* keys');
  const config = await loadUploadConfig(o.configs);
  const incomplete = wandbIncomplete(config);
  if (incomplete !== null && o.to !== 'mlflow') out(incomplete);
  const mlflow = config.mlflow !== null && o.to !== 'wandb';
  const wandb = config.wandb !== null && o.to !== 'mlflow';
  if (!mlflow && !wandb) {
    const which = o.to === 'wandb' ? 'W&B tracker' : o.to === 'mlflow' ? 'MLflow tracker' : 'tracker';
    throw new ConfigError(
      `no ${which} in --config ${o.configs.join(', ')}: set mlflow_tracking_uri, mlflow_experiment_name and mlflow_run_name ` +
        '(mlflow_tracking_token optional), or wandb_project, wandb_name and wandb_api_key',
    );
  }
  const paths = outputPathsFor(output, '');
  const req: UploadRequest = {
    output,
    metrics: paths.metrics,
    configs: o.configs.map((c) => resolve(c)),
    options: { output_jsonl_fpath: output, upload_rollouts: config.uploadRollouts },
  };
  const coverage = await coverageFromFiles(output, paths.sidecar);
  const failures: string[] = [];
  if (mlflow) {
    try {
      out(await uploadMlflow(req, config, coverage));
    } catch (err) {
      if (!(err instanceof UploadFailedError)) throw err;
      failures.push(err.message);
    }
  }
  if (wandb) {
    const metricsFile = existsSync(paths.metrics) ? paths.metrics : null;
    try {
      out(wandbUploadedLine(await uploadToWandb(req, config.wandb!, coverage, { uploadRows: config.uploadRollouts, metricsFile })));
    } catch (err) {
      failures.push(wandbFailure(err));
    }
  }
  if (failures.length > 0) throw new UploadFailedError(failures.join('; '));
}

/** The line that says where the upload went. */
export function uploadedLine(runId: string, rows: number | null, metrics: number | null, trackingUri?: string): string {
  const what = [rows === null ? null : `${rows} rollouts in rollouts.json`, metrics === null ? null : `${metrics} metrics`]
    .filter(Boolean)
    .join(', ');
  return `Uploaded to MLflow${trackingUri ? ` at ${redactUserinfo(trackingUri)}` : ''}: run ${runId}${what ? ` (${what})` : ''}`;
}
