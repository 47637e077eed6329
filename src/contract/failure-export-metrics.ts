/**
 * The seed's `RolloutStore.failure_export_metrics()`: the run's saved failure totals, as the flat
 * `dict[str, int]` exported to the trackers (MLflow, W&B) and saved in the coverage file. The seed
 * names the content, not the keys; they are reverify's, under `failures/` beside NeMo Gym's
 * `coverage/*`:
 *
 * - `failures/failed_attempts`: failure rows of the sidecar (omissions are not attempts), over the
 *   whole history of the files (every run and `--resume` that wrote them);
 * - `failures/failed_attempts/<class>`: the same per `_ng_failure_class` (`unknown`: no class);
 * - `failures/failed_rollouts`: rollouts (keys) with failures only; of them
 *   `failures/terminal` (a terminal row stops them), `failures/retryable` (below the cap) and
 *   `failures/budget_exhausted` (at the cap: the saved `max_rollout_attempts` plus the recorded
 *   extension, never the exporting process's configuration; the coverage's `attempts_exhausted`);
 * - `failures/intentionally_omitted`: rollouts recorded as omissions (`_ng_omitted`).
 */

/** What the metrics are computed from: the coverage counts of the files under the saved cap. */
export interface FailureTotals {
  failed_attempts_by_class: Record<string, number>;
  failed: number;
  terminal_failures: number;
  retryable: number;
  attempts_exhausted: number;
  intentionally_omitted: number;
}

/** The metrics, in a fixed order (totals first, then the classes by name). */
export function failureExportMetrics(t: FailureTotals): Record<string, number> {
  const byClass = Object.entries(t.failed_attempts_by_class).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Record<string, number> = {
    'failures/failed_attempts': byClass.reduce((n, [, v]) => n + v, 0),
    'failures/failed_rollouts': t.failed,
    'failures/terminal': t.terminal_failures,
    'failures/retryable': t.retryable,
    'failures/budget_exhausted': t.attempts_exhausted,
    'failures/intentionally_omitted': t.intentionally_omitted,
  };
  for (const [cls, n] of byClass) out[`failures/failed_attempts/${cls}`] = n;
  return out;
}
