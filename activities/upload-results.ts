/**
 * The upload phase's activities (src/upload/upload-run.ts): open the MLflow run, upload the rollouts
 * table (before aggregation), upload the metrics (after it). Their requests hold paths and counts
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
import { openUpload, uploadMetrics, uploadRollouts, type UploadRequest, type UploadTarget } from '../src/upload/upload-run.js';
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
