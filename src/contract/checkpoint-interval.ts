/**
 * How fresh a running batch's checkpoint is on the server, which bounds how far the live views
 * (src/contract/run-view.ts) lag the verifier: a batch heartbeats its checkpoint every
 * `CHECKPOINT_BEAT_MS` (activities/verify-batch/batch-run.ts), and its worker sends the latest one
 * at least every `CHECKPOINT_THROTTLE_MS` (src/temporal/worker.ts). A checkpoint the server holds is
 * at most one `CHECKPOINT_INTERVAL_MS` old.
 */
export const CHECKPOINT_BEAT_MS = 1000;
export const CHECKPOINT_THROTTLE_MS = 2000;
export const CHECKPOINT_INTERVAL_MS = CHECKPOINT_BEAT_MS + CHECKPOINT_THROTTLE_MS;
