/**
 * Managed-run fixtures written by Python as NeMo Gym's run store writes them
 * (managed-run-writer.py): the manifest's digest is Python's own `json.dumps`.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WRITER = fileURLToPath(new URL('./managed-run-writer.py', import.meta.url));

export type Row = Record<string, unknown>;

export interface ManagedRunSpec {
  dir: string;
  stem?: string;
  materialized: Row[];
  next_attempt?: Record<string, number>;
  run_id?: string;
  outcomes: Array<{ file: 'results' | 'failures'; row: Row }>;
  /** false: a legacy run (materialized inputs, no manifest). */
  manifest?: boolean;
  tail?: { file: 'results' | 'failures'; text: string };
}

export const RUN_ID = '5f0c3b0e8d6a4c6f9a1e2b3c4d5e6f70';

export function writeManagedRun(spec: ManagedRunSpec): void {
  const r = spawnSync('python3', [WRITER], { input: JSON.stringify({ run_id: RUN_ID, next_attempt: {}, ...spec }), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`managed-run-writer.py failed: ${r.stderr}`);
}

/** A materialized input row of task `t`, rollout `r`. */
export const input = (t: number, r: number, extra: Row = {}): Row => ({
  _ng_task_index: t,
  _ng_rollout_index: r,
  responses_create_params: { input: [{ role: 'user', content: `q${t}` }] },
  ...extra,
});

/** A result (results file) of attempt `a` of a managed run. */
export const result = (t: number, r: number, a: number, reward: number, extra: Row = {}): Row => ({
  ...input(t, r),
  _ng_run_id: RUN_ID,
  _ng_attempt_index: a,
  response: { output: [{ type: 'message', content: [{ type: 'output_text', text: `answer ${t}.${r}.${a}` }] }] },
  reward,
  ...extra,
});

/** A failure (sidecar) of attempt `a` of a managed run. */
export const failure = (t: number, r: number, a: number, failureClass: string, extra: Row = {}): Row => ({
  ...input(t, r),
  _ng_run_id: RUN_ID,
  _ng_attempt_index: a,
  _ng_failure_class: failureClass,
  ...extra,
});
