/**
 * Types shared by the CLI, the workflow and the activities. Types only: the workflow bundle
 * imports this file, so it must not contain runtime code.
 */
import type { AttemptCap } from './coverage.js';
import type { RoutingTable } from './routing-table.js';
import type { StopRule } from './stop-rules.js';

// The other types the workflow exchanges, in named parts; re-exported so that one import names them.
export type { FileIdentity, PlanSummary } from './plan-summary.js';
export type { AgentCounts, BatchCounts, BatchResult, PairedUnit } from './batch-result.js';
export type { AgentKeyMetrics, AgentRollouts, Phase, Progress, RunResult } from './run-result.js';

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
  /** `--order`: `random` permutes the plan's tasks by `orderSeed` (absent: file order, as runs before it). */
  order?: 'random' | 'file';
  orderSeed?: number;
  /**
   * `--dispatch-longest-first` (the seed's `dispatch_longest_first`), in force (the flag, or as saved
   * with the run): the plan lists the largest saved rows first. Absent: off.
   */
  dispatchLongestFirst?: boolean;
  force: boolean;
  overwrite: boolean;
  disableAggregation: boolean;
  /** Rows per `verifyBatch` activity. */
  batchSize: number;
  /** `--max-requests`: most `/verify` requests of the run, every try counted (absent: no budget). */
  maxRequests?: number | null;
  /** `--confidence`: the level of the live estimate (absent: no estimate, runs started before it). */
  confidence?: number;
  /** `--stop-when`: rules that end the first pass early (src/contract/stop-rules.ts; absent: none). */
  stopWhen?: StopRule[];
  /** `--noise-sample N`: re-judge N rows this run scored, drawn by `seed`, into the noise file (absent: none). */
  noiseSample?: { rows: number; seed: number };
  /** `--rejudge-saved`: saved rows of the output re-verified and settled before the run's rounds (absent: none). */
  rejudgeSaved?: { keys: string[] | 'all'; dryRun?: boolean };
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
  /** `--allow-unsafe`: a `--resume` with other `--inputs`/`--rollouts` than the saved ones proceeds (absent: off). */
  allowUnsafe?: boolean;
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
   * The upload phase (spec §4.12), when MLflow or W&B is configured in `--config` and not `--no-upload`:
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
  /** MLflow configured (absent: yes, as in runs started when only MLflow was uploaded by the run). */
  mlflow?: boolean;
  /** W&B configured: the workflow logs the run to W&B once, after MLflow (workflows/upload.ts). */
  wandb?: boolean;
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

/**
 * Whether judge failures may be re-judged in later rounds of the same run (`--no-rejudge` and
 * `--max-attempts 1` make a single pass, NeMo Gym's behaviour). `rejudge` absent (a spec from
 * before the flag existed) means on.
 */
export function rejudgesInRounds(spec: Pick<RunSpec, 'rejudge' | 'maxAttempts'>): boolean {
  return spec.rejudge !== false && (spec.maxAttempts ?? 1) > 1;
}
