/**
 * The honest end of a run (issue 10 item 2): per agent, what became of its rollouts; the exit
 * status that says the same; and the summary as one JSON object for scripts (`run --json`).
 */
import type { Coverage } from '../contract/coverage.js';
import type { AgentRollouts, RunResult } from '../contract/run-spec.js';
import { EXIT_OK, EXIT_ROLLOUTS_MISSING, EXIT_RUN_FAILED } from './exit-codes.js';

/** One line per agent: rollouts planned, scored, in the sidecar, not persisted, still missing. */
export function perAgentLines(result: RunResult): string[] {
  return Object.entries(result.rollouts ?? {}).map(([agent, a]) => `  ${agent}: ${agentText(a)}`);
}

function agentText(a: AgentRollouts): string {
  return (
    `${a.planned} planned: ${a.scored} scored, ${a.missing} still missing from the score, ` +
    `${a.notPersisted} not persisted (${a.sidecar} attempt(s) in the failures sidecar)`
  );
}

/**
 * The run's exit status once its rows are complete: 2 when the aggregate metrics could not be
 * computed; 3 when rollouts are still missing from the score with a verdict another attempt could
 * change (judge failures left at the attempt cap); else 0 (every rollout scored, or its failure is
 * terminal: a 4xx reply, a terminal failure class, `_ng_no_persist`).
 */
export function exitStatusOf(result: RunResult): number {
  if (result.aggregationError) return EXIT_RUN_FAILED;
  if ((result.missingAfterCap ?? 0) > 0) return EXIT_ROLLOUTS_MISSING;
  return EXIT_OK;
}

/** What to do about the rollouts left at the attempt cap (printed last; exit 3). */
export function missingAfterCapLine(result: RunResult, maxAttempts: number): string | null {
  const n = result.missingAfterCap ?? 0;
  if (n === 0) return null;
  return (
    `Incomplete: ${n} rollout(s) still judge-failed after ${maxAttempts} attempt(s) (their last attempt is in ${result.outputs.sidecar}); ` +
    `to try them again, run the same command with --resume --extend-attempts N (the attempt cap is saved with the run)`
  );
}

/** The end of a run as one JSON object (`reverify run --json`). */
export interface EndSummary {
  exitStatus: number;
  outcome: 'complete' | 'rollouts-missing' | 'metrics-missing';
  workflowId: string;
  uiUrl: string | null;
  output: string;
  sidecar: string;
  metrics: string | null;
  rollouts: {
    planned: number | null;
    scored: number;
    missing: number | null;
    missingAfterCap: number | null;
    notPersisted: number;
    inMainOutput: number | null;
  };
  attempts: { total: number; inSidecar: number; rounds: number };
  seeded: number;
  agents: Record<string, AgentRollouts> | null;
  keyMetrics: Record<string, Record<string, unknown>>;
  aggregationError: string | null;
  forceWarning: string | null;
  /** The coverage file's content at the end (null: a run of an earlier version wrote none). */
  coverage: Coverage | null;
}

export function endSummary(result: RunResult, workflowId: string, uiUrl: string | null): EndSummary {
  const exitStatus = exitStatusOf(result);
  return {
    exitStatus,
    outcome: exitStatus === EXIT_OK ? 'complete' : exitStatus === EXIT_RUN_FAILED ? 'metrics-missing' : 'rollouts-missing',
    workflowId,
    uiUrl,
    output: result.outputs.output,
    sidecar: result.outputs.sidecar,
    metrics: result.metricsPath,
    rollouts: {
      planned: result.keys ?? null,
      scored: result.done,
      missing: result.missing ?? null,
      missingAfterCap: result.missingAfterCap ?? null,
      notPersisted: result.dropped,
      inMainOutput: result.scored ?? null,
    },
    attempts: { total: result.planned, inSidecar: result.failed, rounds: result.rounds },
    seeded: result.seeded,
    agents: result.rollouts ?? null,
    keyMetrics: Object.fromEntries(result.keyMetrics.map((k) => [k.agent, k.keyMetrics])),
    aggregationError: result.aggregationError ?? null,
    forceWarning: result.forceWarning,
    coverage: result.coverage ?? null,
  };
}
