import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { BatchResult } from '../src/contract/run-spec.js';
import type { ActivityDeps } from './deps.js';
import { failFastOnUserError } from './user-errors.js';
import { batchFiles } from './verify-batch/batch-files.js';
import { BatchRun } from './verify-batch/batch-run.js';
import type { VerifyBatchRequest } from './verify-batch/request.js';

export type { VerifyBatchRequest } from './verify-batch/request.js';
export { CANCEL_GRACE_MS } from './verify-batch/batch-stops.js';

/**
 * Verify phase: one batch of plan rows. Reads its rows by offset, each proven to be the planned
 * bytes (planned-rows.ts); sends each payload (spec §4.7.3) to `/verify` with retries (transport
 * errors, timeouts, 408/429/5xx, with backoff; when they persist the activity fails and Temporal
 * retries it later, keeping the rows already done through the heartbeat checkpoint); routes each
 * result (route-reply.ts) into the batch's part files (batch-recorder.ts), and publishes them
 * atomically. Returns counts only; the workflow commits the parts. One attempt is a `BatchRun`
 * (verify-batch/batch-run.ts).
 */
export function verifyBatch(deps: ActivityDeps) {
  return (req: VerifyBatchRequest): Promise<BatchResult> => failFastOnUserError(() => runBatch(deps, req));
}

async function runBatch(deps: ActivityDeps, req: VerifyBatchRequest): Promise<BatchResult> {
  const files = batchFiles(req);
  // A previous attempt finished but its completion was lost: its published result stands.
  if (existsSync(files.result)) return JSON.parse(await readFile(files.result, 'utf8')) as BatchResult;
  const run = await BatchRun.open(deps, req, files);
  return run.run();
}
