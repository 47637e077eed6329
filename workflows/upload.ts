/**
 * The upload phase in the run (spec §4.12, DESIGN "The phases"): the MLflow run is opened and the
 * rows uploaded after the last commit, before aggregation; the metrics after aggregation. A step
 * that fails after its bounded retries ends the upload (the later steps are skipped) with one
 * warning in the result; the run's outcome and its files are unchanged (`reverify upload` redoes
 * it). Then W&B, from the files, in one activity tried once: one W&B run per run, however many
 * terminals follow it.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { RunResult, RunSpec } from '../src/contract/run-spec.js';
import type { UploadRequest, UploadTarget } from '../src/upload/upload-run.js';
import { upload, wandbOnce } from './activity-proxies.js';
import { enterPhase } from './details.js';
import { innermostMessage } from './failures.js';
import type { RunState } from './run-state.js';

/** The upload's progress between its two points in the run. */
export interface UploadProgress {
  req: UploadRequest;
  target: UploadTarget | null;
  result: NonNullable<RunResult['upload']>;
}

function failed(p: UploadProgress, step: string, err: unknown): void {
  if (CancellationScope.current().consideredCancelled) throw err;
  p.target = null;
  p.result.warning = `MLflow upload failed (${step}): ${innermostMessage(err)}`;
}

/** Before aggregation: opens the MLflow run and uploads the rows. Null when the run uploads nothing. */
export async function uploadRows(spec: RunSpec, st: RunState): Promise<UploadProgress | null> {
  if (!spec.upload || spec.upload.mlflow === false) return null;
  const p: UploadProgress = {
    req: uploadRequest(spec.upload, st),
    target: null,
    result: { runId: null, rows: null, metrics: null, warning: null },
  };
  enterPhase(st, 'upload');
  try {
    p.target = await upload.uploadOpen.executeWithOptions({ summary: 'upload: open the MLflow run' }, [p.req]);
    p.result.runId = p.target.runId;
  } catch (err) {
    failed(p, 'opening the run', err);
    return p;
  }
  if (!spec.upload.uploadRollouts) return p;
  try {
    p.result.rows = await upload.uploadRolloutsTable.executeWithOptions({ summary: 'upload: rollouts.json' }, [p.req, p.target]);
  } catch (err) {
    failed(p, 'rollouts.json', err);
  }
  return p;
}

/** After aggregation: the aggregate and coverage metrics, and the MLflow run finished. */
export async function uploadMetrics(
  p: UploadProgress | null,
  st: RunState,
  coverage: { scored: number; missing: number },
): Promise<RunResult['upload']> {
  if (p === null) return undefined;
  if (p.target === null) return p.result;
  enterPhase(st, 'upload');
  try {
    p.result.metrics = await upload.uploadRunMetrics.executeWithOptions({ summary: 'upload: metrics' }, [p.req, p.target, coverage]);
  } catch (err) {
    failed(p, 'metrics', err);
  }
  return p.result;
}

function uploadRequest(u: NonNullable<RunSpec['upload']>, st: RunState): UploadRequest {
  const outputs = st.outputs!;
  return { output: outputs.output, metrics: outputs.metrics, configs: u.configs, options: u.options };
}

/** After MLflow: the W&B run (config, rollouts table, metrics), or the warning of the step that failed. */
export async function uploadWandb(
  spec: RunSpec,
  st: RunState,
  coverage: { scored: number; missing: number },
  metricsFile: string | null,
): Promise<RunResult['wandb']> {
  if (!spec.upload?.wandb) return undefined;
  enterPhase(st, 'upload');
  try {
    const uploaded = await wandbOnce.uploadWandbRun.executeWithOptions({ summary: 'upload: the W&B run' }, [
      uploadRequest(spec.upload, st),
      coverage,
      metricsFile,
    ]);
    return { uploaded, warning: null };
  } catch (err) {
    if (CancellationScope.current().consideredCancelled) throw err;
    return { uploaded: null, warning: innermostMessage(err) };
  }
}
