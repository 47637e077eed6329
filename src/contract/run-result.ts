/**
 * What the workflow answers: its `progress` query and its result. Types only: the workflow bundle imports
 * this file, so it must not contain runtime code.
 */
import type { Coverage } from './coverage.js';
import type { AgentCounts } from './batch-result.js';
import type { RunEstimateView } from './estimate-view.js';
import type { NoiseFloor } from './noise-floor.js';
import type { OutputPaths } from './run-spec.js';
import type { StoppedEarly } from './stop-rules.js';

/** Per agent, what became of the rollouts (keys) a run planned, at its end. */
export interface AgentRollouts {
  /** Keys planned by the first round. */
  planned: number;
  /** Written to the main output by this run. */
  scored: number;
  /** Failed attempts written to the failures sidecar (a key re-judged later may have several). */
  sidecar: number;
  /** Results the server asked not to persist (`_ng_no_persist`). */
  notPersisted: number;
  /** Keys whose last attempt is in the sidecar: still missing from the score after all rounds. */
  missing: number;
}
export type Phase =
  | 'guard'
  | 'prepare'
  | 'plan'
  | 'rejudge-saved'
  | 'verify'
  | 'rejudge-wait'
  | 'noise-sample'
  | 'upload'
  | 'aggregate'
  | 'done'
  | 'cancelling';

/** `--noise-sample N`: the rows re-judged a second time and the judge's agreement with itself (docs/statistics.md). */
export interface NoiseSampleView {
  /** N asked for, and the seed of the sample. */
  requested: number;
  seed: number;
  /** The noise file (`<stem>_noise.jsonl`). */
  path: string;
  /** Rows re-judged and written to it. */
  sampled: number;
  /** The statistics (null: not computed yet, or the sample was not taken). */
  floor: NoiseFloor | null;
  /** `noiseFloorText`'s line (null with `floor`). */
  text: string | null;
}

/** What a W&B upload logged (src/upload/wandb-upload.ts): no secret, a local path for an offline run. */
export interface WandbLogged {
  project: string;
  runId: string;
  /** The run's local directory (for an offline run: what `wandb sync` uploads). */
  runDir: string;
  offline: boolean;
  rows: number | null;
  metrics: number;
}

/** The answer of the `progress` query. */
export interface Progress {
  phase: Phase;
  /** Rows planned over all rounds (attempts). */
  planned: number;
  /** Re-judgment round (0: the first pass): the latest started. */
  round: number;
  /** The oldest round with batches still to launch or in flight, when older than `round` (rounds overlap: absent, none older). */
  oldestRound?: number;
  done: number;
  failed: number;
  dropped: number;
  rejected: number;
  judgeFailed: number;
  inFlightRows: number;
  perAgent: Record<string, AgentCounts>;
  /** Lines for the user, in order; the CLI prints the ones it has not printed yet. */
  messages: string[];
  outputs: OutputPaths | null;
  /** The `/verify` ceiling (`--concurrency`, or as changed by `reverify control`). */
  concurrency: number;
  /** The limit in force now: lowered when the verifier throttles or slows down. */
  effectiveConcurrency: number;
  /** Paused by an operator, or on the request budget (`budgetPaused`). */
  paused: boolean;
  /** Paused because the request budget is spent (absent: earlier versions). */
  budgetPaused?: boolean;
  /** `/verify` requests made and the budget (`max` null: none). Absent: earlier versions. */
  requests?: { used: number; max: number | null };
  /** Index of this run in the continue-as-new chain (0 for the first). */
  generation: number;
  /** The sidecar's committed length, and its length when this run opened it (absent: earlier versions). */
  sidecarLength?: number;
  sidecarOpenedAt?: number | null;
  /** Rollouts (keys) planned by the first round; `planned` counts attempts (absent: earlier versions). */
  keys?: number | null;
  /** When the re-judgment timer fires (epoch ms, workflow time), during `rejudge-wait`. */
  rejudgeAt?: number | null;
  /** The round that starts then, 1-based as the messages say it (absent: the round after `round`). */
  rejudgeRound?: number;
  /** The current round's batches in flight: their rows and `/verify` slots (absent: earlier versions). */
  running?: Array<{
    batch: number;
    rows: number;
    slots: number;
    sofar?: { main: number; failed: number; dropped: number; requests: number };
  }>;
  /** Rows of batches that ended and wait for their commit (absent: earlier versions). See run-view.ts. */
  landed?: { main: number; failed: number; dropped: number; requests: number };
  /** Rows answered by held batches not running now (stopped with their worker, or out of budget). See run-view.ts. */
  held?: { main: number; failed: number; dropped: number; requests: number };
  /** The live paired estimate (docs/statistics.md; null or absent: none). */
  estimate?: RunEstimateView | null;
  /** `--noise-sample`: the judge noise floor (absent: none asked). */
  noise?: NoiseSampleView;
  /** A `--stop-when` rule fired: which, at how many rows of those planned (null or absent: none). */
  stoppedEarly?: StoppedEarly | null;
}

/** Key metrics of one aggregate entry. */
export interface AgentKeyMetrics {
  agent: string;
  keyMetrics: Record<string, unknown>;
}

/** The workflow's result. */
export interface RunResult {
  outputs: OutputPaths;
  metricsPath: string | null;
  planned: number;
  /** Rounds run (1 + re-judgment rounds). */
  rounds: number;
  /** Successful rows copied from --rollouts (recovery mode). */
  seeded: number;
  done: number;
  failed: number;
  dropped: number;
  rejected: number;
  judgeFailed: number;
  perAgent: Record<string, AgentCounts>;
  /** Rollouts (keys) this run planned; `planned` counts attempts over all rounds. */
  keys?: number;
  /** Rows in the main output at the end (null: not known, a run of an earlier version). */
  scored?: number | null;
  /** Keys of this run still missing from the score after all rounds (their last attempt is in the sidecar). */
  missing?: number;
  /** Per agent: rollouts planned, scored, in the sidecar, not persisted, still missing (absent/null: earlier versions). */
  rollouts?: Record<string, AgentRollouts> | null;
  /**
   * Of `missing`: keys whose last verdict is one a re-judgment round plans again (a judge failure),
   * left so because the attempt cap was reached (or re-judgment is off). Absent: earlier versions.
   */
  missingAfterCap?: number;
  /** Length of the sidecar when this run opened it. */
  sidecarOpenedAt?: number | null;
  /**
   * Length of the main output when this run's first re-judgment round began: only rows past it can
   * score a key this run routed to the sidecar (null or absent: no round began, or earlier versions).
   */
  mainAtRejudge?: number | null;
  keyMetrics: AgentKeyMetrics[];
  /**
   * Why the aggregate phase cannot succeed (what the server answered); null when it succeeded or
   * was skipped. The rows are complete either way. Absent in runs of earlier versions.
   */
  aggregationError?: string | null;
  /** The upload phase: the MLflow run it logged to, or the warning of the step that failed (the run's outcome is unchanged). */
  upload?: { runId: string | null; rows: number | null; metrics: number | null; warning: string | null } | null;
  /**
   * The W&B upload (once per run, by the workflow; absent when W&B is not configured, or in runs
   * started before it moved there): what it logged, or the warning of the step that failed.
   */
  wandb?: { uploaded: WandbLogged | null; warning: string | null };
  messages: string[];
  /** The `--force` warning, printed again at the very end. */
  forceWarning: string | null;
  /** The coverage written at the end (`<out stem>_coverage.json`); absent in runs started before it. */
  coverage?: Coverage | null;
  /** The live paired estimate at the end (docs/statistics.md; absent: none). */
  estimate?: RunEstimateView;
  /** A `--stop-when` rule ended the first pass early (absent: none did). */
  stoppedEarly?: StoppedEarly;
  /** `--noise-sample`: the judge noise floor (absent: none asked). */
  noise?: NoiseSampleView;
}
