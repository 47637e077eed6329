/**
 * Types shared by the CLI, the workflow and the activities. Types only: the workflow bundle
 * imports this file, so it must not contain runtime code.
 */
import type { BatchAudit } from './batch-audit.js';
import type { AttemptCap, Coverage } from './coverage.js';
import type { RoutingTable } from './routing-table.js';

/**
 * NeMo Gym 0.7.0's opt-in retry rules (src/contract/retry-rules.ts). Absent in the specs of runs
 * started before they existed: off.
 */
export interface RetryRules {
  /** `--retry-invalid-judge-responses`: invalid verdicts are `judge_invalid`/`permanent` failures. */
  retryInvalidJudgeResponses?: boolean;
  /** `--retry-terminal-timeouts`: terminal timeouts and repairable environment faults are retried. */
  retryTerminalTimeouts?: boolean;
}

/** Everything a run needs, resolved by the CLI: absolute paths and options, never rows. */
export interface RunSpec extends RetryRules {
  /** Absolute path of the materialized inputs JSONL (`--inputs`). */
  inputsPath: string;
  /** Absolute path of the rollouts JSONL (`--rollouts`); empty in ATIF mode, which has none. */
  rolloutsPath: string;
  /** `--input-format atif` (NeMo Gym 0.7.0's ATIF mode); absent for NeMo Gym rollouts. */
  atif?: AtifSpec;
  /** Absolute output path as the user gave it (before any `unsafe_` prefix). */
  outputPath: string;
  /** Agent name -> resources server routing, with server URLs. */
  routing: RoutingTable;
  /** Servers whose `/reverify_mode` the guard checks (spec §4.3: every server of the table). */
  guardServers: Array<{ name: string; url: string }>;
  /**
   * The guard's decision, when `reverify run` made it before starting the workflow (precheck.ts):
   * the workflow records it instead of asking every server again. Absent: the guard activity asks
   * (`--no-worker`, runs started by earlier versions).
   */
  guarded?: { prefix: '' | 'unsafe_'; warning: string | null };
  /** Most `/verify` requests in flight across the whole run (all workers). */
  concurrency: number;
  /** Verify at most this many source rows (counted before the resume filter). */
  limit: number | null;
  force: boolean;
  overwrite: boolean;
  disableAggregation: boolean;
  /** Rows per `verifyBatch` activity. */
  batchSize: number;
  /** `--max-requests`: most `/verify` requests of the run, every try counted (absent: no budget). */
  maxRequests?: number | null;
  /** Timeout of one `/verify` request, in ms. */
  requestTimeoutMs: number;
  /** Heartbeat timeout of a batch activity, in ms: how fast a dead worker is noticed. */
  heartbeatTimeoutMs: number;
  /** `--resume` (spec §4.8): skip what the outputs already hold. */
  resume: boolean;
  /** `--judge-failed-only` (spec §4.6): recover the judge failures of the --rollouts sidecar. */
  judgeFailedOnly: boolean;
  /** `--append` (with --judge-failed-only): write into an existing output. */
  append: boolean;
  /** `--repair-truncated`: cut a cut-off last line of a reused output instead of stopping. */
  repairTruncated: boolean;
  /**
   * Attempt cap per key in force: `attemptCap`'s sum when set, else `--max-attempts`, else
   * NEMO_GYM_MAX_ROLLOUT_ATTEMPTS, default 3.
   */
  maxAttempts: number;
  /**
   * The cap as saved with the run (the coverage file; `--resume` reads it back) and the extension
   * recorded by `--extend-attempts`: `maxAttempts` is their sum. Absent in runs started before it.
   */
  attemptCap?: AttemptCap;
  /** Re-judge judge failures in automatic rounds (false: one pass, as NeMo Gym). */
  rejudge: boolean;
  /** Delay before the first re-judgment round, in ms; doubles every round. */
  rejudgeDelayMs: number;
  /** Continue-as-new after this many batches even if Temporal does not suggest it yet (tests). */
  continueAsNewAfterBatches?: number;
  /**
   * Retry intervals of the aggregate phase instead of 5 s doubling to 1 min (tests); `initialIntervalMs`
   * is also the wait between the tries of a group the server is up but fails on (activities/aggregate-post.ts).
   */
  aggregateRetry?: { initialIntervalMs: number; maximumIntervalMs: number };
  /** The deadline of one `POST /aggregate_metrics` instead of the one scaled by the rows (tests; src/contract/aggregate-timeout.ts). */
  aggregateTimeoutMs?: number;
  /**
   * The upload phase (spec §4.12), when MLflow is configured in `--config` and not `--no-upload`:
   * the config files (the activity reads the exporter keys and the token from them: no secret is
   * in the spec), whether the rollouts table is uploaded (`upload_rollouts`), and the run's options
   * under NeMo Gym's config keys (for the exported config).
   */
  upload?: UploadSpec;
}

/** See `RunSpec.upload`. */
export interface UploadSpec {
  configs: string[];
  uploadRollouts: boolean;
  options: Record<string, unknown>;
}

/** What an ATIF run needs besides the common options. */
export interface AtifSpec {
  /** Absolute path of the manifest (`--atif-manifest`). */
  manifestPath: string;
  /**
   * For each resources server of the routing table: whether its config exposes tools over MCP, or
   * the message of the config problem that reading it meets (raised only for rows with function calls).
   */
  mcpExposure: Record<string, boolean | string>;
}

/** Where a run writes, after the guard decided the prefix. */
export interface OutputPaths {
  output: string;
  sidecar: string;
  metrics: string;
  /** The run's work directory (plan and part files), next to the output. */
  workDir: string;
}

/** What the plan phase found. Counts only. */
/** What a file was when the plan read it: told in the message when a planned row has changed. */
export interface FileIdentity {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface PlanSummary {
  planPath: string;
  /**
   * Bytes per plan record (`PLAN_RECORD_BYTES`: records carry checksums). Absent in the plans of
   * runs started before checksums (32-byte records whose reads are not proven).
   */
  recordBytes?: number;
  /** The files the plan's offsets point into (source, inputs), as the plan read them. */
  files?: FileIdentity[];
  /** The file the plan's source offsets point into: --rollouts, its sidecar in recovery mode, or the ATIF manifest. */
  sourcePath: string;
  /** `atif`: source rows are manifest entries whose trajectories the records prove (absent: NeMo Gym rollouts). */
  inputFormat?: 'atif';
  /** Rows to verify. */
  rows: number;
  /**
   * Rollouts (distinct keys) the source holds within `--limit`, resume skips included: the run's
   * expected rollouts in its coverage. Absent in recovery plans (the files' keys count) and runs started before it.
   */
  keys?: number;
  /** Agent names, indexed by the plan's agent numbers. */
  agents: string[];
  /** Resources server names, indexed by the plan's server numbers. */
  servers: string[];
  /** Rows per agent name. */
  rowsPerAgent: Record<string, number>;
}

/** Per-agent counts of committed results. */
export interface AgentCounts {
  done: number;
  failed: number;
  dropped: number;
  rewardSum: number;
  /** Re-judgments withdrawn (answered without a grade; absent: none). */
  withdrawn?: number;
}

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

/** What one batch produced (written to its part files, not yet committed). */
export interface BatchResult {
  batch: number;
  mainPart: string;
  sidecarPart: string;
  /** Results routed to the main output / the sidecar / nowhere (`_ng_no_persist`). */
  main: number;
  failed: number;
  dropped: number;
  /** Of `failed`: 4xx replies of /verify (`verify_rejected`). */
  rejected: number;
  /**
   * Of `failed`: verdicts the next re-judgment round plans again: `judge_failed`; with the retry
   * rules also `judge_invalid` and retried timeouts (`isRetriedNextRound`).
   */
  judgeFailed: number;
  /**
   * Re-judgments withdrawn: the verifier answered without a grade, nothing was written, the failure
   * stays selected and the next round plans it again (absent: none, or earlier versions).
   */
  withdrawn?: number;
  perAgent: Record<string, AgentCounts>;
  /** Overload signals for adaptive concurrency: 429/503 answers met (and retried) in this batch. */
  throttled: number;
  /** Sum and count of the latencies of answered `/verify` requests, in ms. */
  latencyMsSum: number;
  latencyCount: number;
  /**
   * Sums over the answered rows of their time on the judge and of their time held back by
   * throttling (429/503 waits and the process's gate): the share of its slots the batch kept busy
   * (absent: earlier versions).
   */
  busyMsSum?: number;
  throttleWaitMsSum?: number;
  /** The run's concurrency limit when the batch was launched (absent: earlier versions). */
  launchLimit?: number;
  /** `/verify` requests this activity made, every try and probe counted (absent: earlier versions). */
  requestsUsed?: number;
  /**
   * True: the batch spent its allowance before its last row. Its parts are not published (nothing
   * to commit); its checkpoint is kept in the work directory and the batch is launched again.
   */
  held?: boolean;
  /**
   * The rows not in the main output (key, class, status, attempt) and the failed attempts of the
   * batch, for the audit (src/contract/batch-audit.ts). Absent in results of earlier versions.
   */
  audit?: BatchAudit;
  /** Rows the batch did not reach because the run was cancelled (absent when it finished them all). */
  unfinished?: number;
}

export type Phase = 'guard' | 'prepare' | 'plan' | 'verify' | 'rejudge-wait' | 'upload' | 'aggregate' | 'done' | 'cancelling';

/** The answer of the `progress` query. */
export interface Progress {
  phase: Phase;
  /** Rows planned over all rounds (attempts). */
  planned: number;
  /** Re-judgment round (0: the first pass). */
  round: number;
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
  /** The current round's batches in flight: their rows and `/verify` slots (absent: earlier versions). */
  running?: Array<{ batch: number; rows: number; slots: number }>;
  /** Rows of batches that ended and wait for their commit (absent: earlier versions). See run-view.ts. */
  landed?: { main: number; failed: number; dropped: number; requests: number };
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
  keyMetrics: AgentKeyMetrics[];
  /**
   * Why the aggregate phase cannot succeed (what the server answered); null when it succeeded or
   * was skipped. The rows are complete either way. Absent in runs of earlier versions.
   */
  aggregationError?: string | null;
  /** The upload phase: the MLflow run it logged to, or the warning of the step that failed (the run's outcome is unchanged). */
  upload?: { runId: string | null; rows: number | null; metrics: number | null; warning: string | null } | null;
  messages: string[];
  /** The `--force` warning, printed again at the very end. */
  forceWarning: string | null;
  /** The coverage written at the end (`<out stem>_coverage.json`); absent in runs started before it. */
  coverage?: Coverage | null;
}
