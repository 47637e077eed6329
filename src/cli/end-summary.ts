/**
 * The honest end of a run (issue 10 item 2): per agent, what became of its rollouts; the exit
 * status that says the same; and the summary as one JSON object for scripts (`run --json`).
 */
import { missingFromScore, type MissingFromScore } from '../contract/coverage-block.js';
import type { Coverage } from '../contract/coverage.js';
import type { AgentRollouts, RunResult } from '../contract/run-spec.js';
import type { RunEstimateView } from '../contract/estimate-view.js';
import type { StoppedEarly } from '../contract/stop-rules.js';
import type { NoiseSampleView } from '../contract/run-result.js';
import { EXIT_OK, EXIT_ROLLOUTS_MISSING, EXIT_RUN_FAILED } from './exit-codes.js';
import { leftByStop } from './stopped-early.js';

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
 * The rollouts missing from the score at the end, from the coverage of the files (the same files
 * give the same answer, whatever path led to them); null for a run of an earlier version without
 * a coverage file.
 */
export function missingAtEnd(result: RunResult): MissingFromScore | null {
  return result.coverage ? missingFromScore(result.coverage) : null;
}

/**
 * The run's exit status once its rows are complete: 2 when the aggregate metrics could not be
 * computed; 3 when rollouts are still missing from the score (neither scored, nor omitted, nor
 * failed terminally: `missingFromScore`), the rollouts a `--stop-when` rule left never started
 * excepted (a clean early stop is 0); else 0. A run of an earlier version (no coverage): 3 when
 * judge failures were left at the attempt cap.
 */
export function exitStatusOf(result: RunResult): number {
  if (result.aggregationError) return EXIT_RUN_FAILED;
  const missing = missingAtEnd(result);
  const n = missing ? missing.resumable - leftByStop(result) + missing.atCap : (result.missingAfterCap ?? 0);
  return n > 0 ? EXIT_ROLLOUTS_MISSING : EXIT_OK;
}

/**
 * What to do about the rollouts still missing from the score (printed last; exit 3): `--resume`
 * for those another attempt may score, `--resume --extend-attempts N` for those at the attempt
 * cap; an ATIF run cannot be resumed, so it is run again with `--overwrite`.
 */
export function incompleteLines(result: RunResult, maxAttempts: number, atif = false): string[] {
  const all = missingAtEnd(result) ?? { resumable: 0, atCap: result.missingAfterCap ?? 0 };
  // The rollouts a stop rule left are said by the `Stopped early:` line (stopped-early.ts).
  const missing = { ...all, resumable: all.resumable - leftByStop(result) };
  const sidecar = result.outputs.sidecar;
  if (atif && missing.resumable + missing.atCap > 0)
    return [
      `Incomplete: ${missing.resumable + missing.atCap} rollout(s) still missing from the score (their last attempt is in ${sidecar}); ` +
        'ATIF runs cannot be resumed: to try them again, run the same command with --overwrite (every trajectory is verified again)',
    ];
  const lines: string[] = [];
  if (missing.resumable > 0)
    lines.push(
      `Incomplete: ${missing.resumable} rollout(s) still missing from the score, below the attempt cap (failed, not persisted or not sent; see ${sidecar}); ` +
        'to try them again, run the same command with --resume',
    );
  if (missing.atCap > 0) {
    const cap = result.coverage?.attempt_cap ?? maxAttempts;
    lines.push(
      `Incomplete: ${missing.atCap} rollout(s) still failed after ${cap} attempt(s), the attempt cap (their last attempt is in ${sidecar}); ` +
        'to try them again, run the same command with --resume --extend-attempts N (the attempt cap is saved with the run)',
    );
  }
  return lines;
}

/** The end of a run as one JSON object (`reverify run --json`). */
export interface EndSummary {
  exitStatus: number;
  outcome: 'complete' | 'stopped-early' | 'rollouts-missing' | 'metrics-missing';
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
  /** The rollouts missing from the score at the end, by remedy (null: a run of an earlier version). */
  missingFromScore: MissingFromScore | null;
  aggregationError: string | null;
  forceWarning: string | null;
  /** The coverage file's content at the end (null: a run of an earlier version wrote none). */
  coverage: Coverage | null;
  /** The live paired estimate at the end (absent: none; docs/statistics.md). */
  estimate?: RunEstimateView;
  /** The `--stop-when` rule that ended the first pass early (absent: none did). */
  stoppedEarly?: StoppedEarly;
  /** `--noise-sample`: the judge noise floor (absent: none asked; docs/statistics.md). */
  noise?: NoiseSampleView;
}

export function endSummary(result: RunResult, workflowId: string, uiUrl: string | null): EndSummary {
  const exitStatus = exitStatusOf(result);
  return {
    exitStatus,
    outcome: outcomeOf(exitStatus, result),
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
    missingFromScore: missingAtEnd(result),
    aggregationError: result.aggregationError ?? null,
    forceWarning: result.forceWarning,
    coverage: result.coverage ?? null,
    ...(result.estimate ? { estimate: result.estimate } : {}),
    ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}),
    ...(result.noise ? { noise: result.noise } : {}),
  };
}

function outcomeOf(exitStatus: number, result: RunResult): EndSummary['outcome'] {
  if (exitStatus === EXIT_RUN_FAILED) return 'metrics-missing';
  if (exitStatus !== EXIT_OK) return 'rollouts-missing';
  return result.stoppedEarly ? 'stopped-early' : 'complete';
}
