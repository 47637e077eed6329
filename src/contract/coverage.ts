/**
 * The run's coverage (the seed's `RolloutStore.coverage()` / `write_coverage()` /
 * `outcomes_recorded`), as pure arithmetic over what the output files hold per rollout (key):
 * rows in the main output, counted failures in the sidecar, a terminal row, an omission. Each key
 * has one disposition: successful (in the main output), intentionally omitted (an `_ng_omitted`
 * sidecar row), failed (sidecar rows only; terminal, out of attempts, or retryable), unknown
 * (dispatched by this run, no row persisted: `_ng_no_persist`), or never dispatched (no row and
 * never sent: planned but not reached, e.g. a run paused or cancelled first). The field names are
 * the seed's, in snake_case, as the file `<out stem>_coverage.json` carries them.
 */
import { reconciliationGap } from './coverage-reconcile.js';
import { failureExportMetrics } from './failure-export-metrics.js';
import type { InputIdentity } from './plan-summary.js';
import type { StoppedEarly } from './stop-rules.js';
import type { Measure } from './measure.js';

/** What the files say about one key. */
export interface KeyTally {
  /** Rows of the main output with this key. */
  main: number;
  /** Sidecar rows that count against the attempt cap (every failure row but omissions). */
  counted: number;
  /** A sidecar row stops retries (stamped terminal, or an omission). */
  terminal: boolean;
  /** A sidecar row is an intentional omission (`_ng_omitted`). */
  omitted: boolean;
  /** How its main rows measure it (measured if any of them is); absent: measured. */
  measure?: Measure;
}

/** Where one key stands in the coverage: scored, omitted, or why it is still failed. */
export type KeyCoverageClass = 'success' | 'omitted' | 'terminal' | 'exhausted' | 'retryable' | 'none';

/** The seed's disposition of a key under an attempt cap, refined for failures by why they stay failed. */
export function dispositionOf(t: KeyTally, cap: number): KeyCoverageClass {
  if (t.main > 0) return 'success';
  if (t.omitted) return 'omitted';
  if (t.counted === 0) return t.terminal ? 'terminal' : 'none';
  if (t.terminal) return 'terminal';
  return t.counted >= cap ? 'exhausted' : 'retryable';
}

/**
 * Whether a key would run again under some attempt cap (the seed's `replayable_identities`: the
 * replay rule without the cap): failed, not terminal, not omitted, not scored.
 */
export function isReplayable(t: KeyTally): boolean {
  return t.main === 0 && !t.omitted && !t.terminal && t.counted > 0;
}

/** Whether raising the cap from `cap` by `extension` makes this key pending again. */
export function reopensWith(t: KeyTally, cap: number, extension: number): boolean {
  return isReplayable(t) && t.counted >= cap && t.counted < cap + extension;
}

/** The totals of the files, key by key. */
export interface CoverageCounts {
  successful: number;
  /** Of the successful, masked by their producer (`mask_sample` with a reward) and without a numeric reward. */
  masked: number;
  unscored: number;
  failed: number;
  intentionally_omitted: number;
  attempts_exhausted: number;
  retryable: number;
  terminal_failures: number;
  /** Main-output rows (keyed). */
  main_rows: number;
  /** Sidecar rows (keyed), omissions included. */
  sidecar_rows: number;
  /** Of them, omissions. */
  omission_rows: number;
  /** Of them, terminal failure rows (stamped terminal, not omissions): attempts the budget does not count. */
  terminal_rows: number;
  /** Counted failure rows (omissions left out) per `_ng_failure_class` (`unknown`: none). */
  failed_attempts_by_class: Record<string, number>;
}

export function emptyCounts(): CoverageCounts {
  return {
    successful: 0,
    masked: 0,
    unscored: 0,
    failed: 0,
    intentionally_omitted: 0,
    attempts_exhausted: 0,
    retryable: 0,
    terminal_failures: 0,
    main_rows: 0,
    sidecar_rows: 0,
    omission_rows: 0,
    terminal_rows: 0,
    failed_attempts_by_class: {},
  };
}

/** Adds one key's tally (its rows are counted by the caller, `addRows`). */
export function addKey(c: CoverageCounts, t: KeyTally, cap: number): void {
  switch (dispositionOf(t, cap)) {
    case 'success':
      c.successful++;
      if (t.measure === 'masked') c.masked++;
      if (t.measure === 'unscored') c.unscored++;
      break;
    case 'omitted':
      c.intentionally_omitted++;
      break;
    case 'terminal':
      c.failed++;
      c.terminal_failures++;
      break;
    case 'exhausted':
      c.failed++;
      c.attempts_exhausted++;
      break;
    case 'retryable':
      c.failed++;
      c.retryable++;
      break;
    case 'none':
      break;
  }
}

/** The attempt cap in force: the saved `max_rollout_attempts` plus the recorded extension. */
export interface AttemptCap {
  max_rollout_attempts: number;
  attempt_extension: number;
}

export function capOf(c: AttemptCap): number {
  return c.max_rollout_attempts + c.attempt_extension;
}

/** What the run knows besides the files. */
export interface CoverageContext {
  run_id: string;
  /** `open` (written when the outputs opened), `finished`, `failed`, `cancelled`. */
  state: 'open' | 'finished' | 'failed' | 'cancelled';
  /** Rollouts (distinct keys) the run covers; null: the keys the files hold (recovery). */
  expected: number | null;
  /** Rollouts this run dispatched whose result was not persisted (`_ng_no_persist`). */
  not_persisted: number;
  /** Rows this run appended to the main output and the sidecar. */
  outcomes_recorded: number;
  cap: AttemptCap;
  retry_terminal_timeouts: boolean;
  /** `--dispatch-longest-first` in force (saved with the run, as `retry_terminal_timeouts`). */
  dispatch_longest_first: boolean;
  output: string;
  failures: string;
  /** `--order random` and its seed, saved with the run: `--resume` reuses the seed (absent: file order). */
  plan_order?: PlanOrder;
  /** A `--stop-when` rule ended the first pass early (absent: none did). */
  stopped_early?: StoppedEarly;
  /** The digests of the files the run was planned from (`--resume` refuses other files); absent: none saved. */
  input_identity?: InputIdentity;
}

/** The plan's order as the coverage file saves it. */
export interface PlanOrder {
  order: 'random';
  seed: number;
}

/** How a rollout's outcome is selected among its rows: its latest attempt (the run store's only policy). */
export const SELECTION_POLICY = 'latest_allocated';

/** The coverage file's content (`schema_version` 1 of reverify's plain runs). */
export interface Coverage extends AttemptCap {
  schema_version: 1;
  selection_policy: typeof SELECTION_POLICY;
  run_id: string;
  state: CoverageContext['state'];
  expected: number;
  successful: number;
  /** `successful = measured + masked + unscored` (the run store's split of the scored rollouts). */
  measured: number;
  masked: number;
  unscored: number;
  failed: number;
  intentionally_omitted: number;
  unknown: number;
  never_dispatched: number;
  /** Outcome rows: main-output rows plus sidecar rows but omissions (omissions are not attempts). */
  attempts: number;
  /** Sidecar rows the retry budget counts: failures neither terminal nor omitted. */
  counted_failures: number;
  attempts_exhausted: number;
  retryable: number;
  /** The cap in force: `max_rollout_attempts + attempt_extension`. */
  attempt_cap: number;
  retry_terminal_timeouts: boolean;
  dispatch_longest_first: boolean;
  completion_fraction: number;
  complete: boolean;
  /** `expected = successful + failed + intentionally_omitted + unknown + never_dispatched` (coverage-reconcile.ts). */
  reconciled: boolean;
  outcomes_recorded: number;
  /** A plain run has no manifest: identities are row keys, not verified run/attempt ids. */
  identity_verified: false;
  reporting: {
    output: string;
    failures: string;
    main_rows: number;
    sidecar_rows: number;
    terminal_failures: number;
    terminal_rows: number;
  };
  /** The seed's `failure_export_metrics()` (src/contract/failure-export-metrics.ts), as exported to the trackers. */
  failure_export_metrics: Record<string, number>;
  plan_order?: PlanOrder;
  stopped_early?: StoppedEarly;
  input_identity?: InputIdentity;
}

/**
 * The coverage of a run from its files' counts. Pending = retryable + unknown + never dispatched;
 * `completion_fraction` = (expected − pending) / expected (1 when nothing is expected); `complete`
 * when nothing is pending.
 */
export function coverageOf(c: CoverageCounts, ctx: CoverageContext): Coverage {
  const cov = countedCoverage(c, ctx);
  return { ...cov, reconciled: reconciliationGap(cov) === null };
}

function countedCoverage(c: CoverageCounts, ctx: CoverageContext): Coverage {
  const recorded = c.successful + c.failed + c.intentionally_omitted;
  const expected = Math.max(ctx.expected ?? recorded + ctx.not_persisted, recorded);
  const unknown = Math.min(ctx.not_persisted, expected - recorded);
  const never = expected - recorded - unknown;
  const attempted = c.sidecar_rows - c.omission_rows;
  const pending = c.retryable + unknown + never;
  return {
    schema_version: 1,
    selection_policy: SELECTION_POLICY,
    run_id: ctx.run_id,
    state: ctx.state,
    expected,
    successful: c.successful,
    measured: c.successful - c.masked - c.unscored,
    masked: c.masked,
    unscored: c.unscored,
    failed: c.failed,
    intentionally_omitted: c.intentionally_omitted,
    unknown,
    never_dispatched: never,
    attempts: c.main_rows + attempted,
    counted_failures: attempted - c.terminal_rows,
    attempts_exhausted: c.attempts_exhausted,
    retryable: c.retryable,
    max_rollout_attempts: ctx.cap.max_rollout_attempts,
    attempt_extension: ctx.cap.attempt_extension,
    attempt_cap: capOf(ctx.cap),
    retry_terminal_timeouts: ctx.retry_terminal_timeouts,
    dispatch_longest_first: ctx.dispatch_longest_first,
    completion_fraction: expected === 0 ? 1 : Math.round(((expected - pending) / expected) * 1e6) / 1e6,
    complete: pending === 0,
    reconciled: false,
    outcomes_recorded: ctx.outcomes_recorded,
    identity_verified: false,
    reporting: {
      output: ctx.output,
      failures: ctx.failures,
      main_rows: c.main_rows,
      sidecar_rows: c.sidecar_rows,
      terminal_failures: c.terminal_failures,
      terminal_rows: c.terminal_rows,
    },
    failure_export_metrics: failureExportMetrics(c),
    ...(ctx.plan_order ? { plan_order: ctx.plan_order } : {}),
    ...(ctx.stopped_early ? { stopped_early: ctx.stopped_early } : {}),
    ...(ctx.input_identity ? { input_identity: ctx.input_identity } : {}),
  };
}
