/**
 * The upload phase's activities (src/upload/upload-run.ts): open the MLflow run, upload the rollouts
 * table (before aggregation), upload the metrics (after it); then the W&B run, in one activity. Their requests hold paths and counts
 * only; the token is read by the activity, and no error it throws carries URL credentials. A
 * refusal of the tracker (4xx other than 429) or a row that cannot be exported is a non-retryable
 * `UploadRefused`; anything else is retried by the upload proxy's bounded policy
 * (workflows/activity-proxies.ts), and then the run goes on without it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from '../src/contract/errors.js';
import { FailureType } from '../src/contract/failure-types.js';
import { redactError } from '../src/contract/secrets.js';
import { MlflowHttpError } from '../src/upload/mlflow-client.js';
import { loadUploadConfig } from '../src/upload/upload-config.js';
import { openUpload, uploadMetrics, uploadRollouts, type UploadRequest, type UploadTarget } from '../src/upload/upload-run.js';
import { uploadToWandb, wandbFailure, WandbUploadError, type WandbUploaded } from '../src/upload/wandb-upload.js';
import { whileHeartbeating } from './heartbeating.js';

/** Runs an upload step; what it throws goes into the history without URL credentials (src/contract/secrets.ts). */
async function refusalsFinal<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    redactError(err);
    const refused = err instanceof MlflowHttpError && err.status >= 400 && err.status < 500 && err.status !== 429;
    if (refused || err instanceof ConfigError || err instanceof SyntaxError)
      throw ApplicationFailure.nonRetryable((err as Error).message, FailureType.UploadRefused);
    throw err;
  }
}

/** Opens the MLflow run (experiment, run, config); returns its ids. */
export function uploadOpen(req: UploadRequest): Promise<UploadTarget> {
  return refusalsFinal(() => openUpload(req));
}

/** Uploads the main output's rows as the `rollouts.json` table; returns the row count. */
export function uploadRolloutsTable(req: UploadRequest, run: UploadTarget): Promise<number> {
  return refusalsFinal(() => whileHeartbeating(() => uploadRollouts(req, run)));
}

/** Uploads the aggregate and coverage metrics and finishes the MLflow run; returns how many were logged. */
export function uploadRunMetrics(req: UploadRequest, run: UploadTarget, coverage: { scored: number; missing: number }): Promise<number> {
  return refusalsFinal(() => uploadMetrics(req, run, coverage));
}

/**
 * Logs the run to W&B (src/upload/wandb-upload.ts: W&B's own client in a child process of this
 * worker): once per run, whichever worker runs it and however many terminals follow the run. The
 * key is read here (`--config`'s `wandb_api_key`, else this worker's `WANDB_API_KEY`), never put in
 * the history. Every failure is final (the W&B proxy does not retry: a second try after a partial
 * log would open a second W&B run); its one line is the run's warning.
 */
export function uploadWandbRun(
  req: UploadRequest,
  coverage: { scored: number; missing: number },
  metricsFile: string | null,
): Promise<WandbUploaded> {
  return whileHeartbeating(async () => {
    try {
      const config = await loadUploadConfig(req.configs);
      if (config.wandb === null) throw new WandbUploadError('opening the run', NO_WANDB_KEY);
      return await uploadToWandb(req, config.wandb, coverage, { uploadRows: config.uploadRollouts, metricsFile });
    } catch (err) {
      throw ApplicationFailure.nonRetryable(wandbFailure(err), FailureType.UploadRefused);
    }
  });
}

const NO_WANDB_KEY =
  'no W&B key where the worker runs (`wandb_api_key` in --config, or WANDB_API_KEY in the environment of `reverify worker`): set one there, or upload later with `reverify upload --to wandb`';
