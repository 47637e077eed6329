/**
 * Every flag of `reverify run`, declared once: its usage, what it sets, how its text is read, what
 * it means and its default. The CLI builds its options and help from this list, validation
 * messages name flags through it, and the option table of docs/usage.md is this list (a unit test
 * compares them). Meanings are Markdown (the help shows them without backticks).
 */
import { WORKER_RSS_MIB, WORKERS_PER_CORE } from './worker-bound.js';
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_CONCURRENCY,
  DEFAULT_PLAN_ORDER,
  PLAN_ORDERS,
  DEFAULT_REJUDGE_DELAY_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  REJUDGE_DELAY_CEILING_MS,
} from './run-defaults.js';
import type { RunFlag } from './run-flag.js';
import { FILE_FLAGS } from './run-flags-files.js';
import { STATISTICS_FLAGS } from './run-flags-statistics.js';

export type { FlagKind, RunFlag } from './run-flag.js';

const seconds = (ms: number) => String(ms / 1000);

export const RUN_FLAG_LIST: readonly RunFlag[] = [
  ...FILE_FLAGS,
  {
    usage: '--concurrency N',
    gymKey: 'num_samples_in_parallel',
    key: 'concurrency',
    kind: 'int',
    meaning: 'most `/verify` requests in flight across the whole run, all workers together',
    shownDefault: String(DEFAULT_CONCURRENCY),
  },
  {
    usage: '--limit N',
    gymKey: 'limit',
    key: 'limit',
    kind: 'int',
    meaning: 'verify only the first N rollouts of the file',
    shownDefault: 'all',
  },
  {
    usage: '--order ORDER',
    key: 'order',
    kind: 'choice',
    choices: PLAN_ORDERS,
    meaning:
      '`random`: verify whole tasks in an order drawn from `--seed`, so the rows done at any moment are a random sample of tasks (see "Order" in docs/usage.md); `file`: in file order',
    shownDefault: DEFAULT_PLAN_ORDER,
  },
  {
    usage: '--seed N',
    key: 'orderSeed',
    kind: 'int',
    meaning:
      'the seed of `--order random` and of `--noise-sample`, printed at start and saved with the run (its coverage file): `--resume` reuses it unless given',
    shownDefault: 'drawn at random',
  },
  {
    usage: '--force',
    gymKey: 'force',
    key: 'force',
    kind: 'switch',
    meaning: "run even if a server's `reverify_mode` is `unknown`/`unsupported`; the output gets the `unsafe_` prefix",
    shownDefault: 'off',
  },
  {
    usage: '--overwrite',
    gymKey: 'overwrite',
    key: 'overwrite',
    kind: 'switch',
    meaning: 'delete an existing output and sidecar first (only after every input row has been validated)',
    shownDefault: 'off',
  },
  {
    usage: '--disable-aggregation',
    gymKey: 'disable_aggregation',
    key: 'disableAggregation',
    kind: 'switch',
    meaning: 'skip `/aggregate_metrics`',
    shownDefault: 'off',
  },
  {
    usage: '--resume',
    gymKey: 'resume_from_cache',
    key: 'resume',
    kind: 'switch',
    meaning: 'continue from the existing output and sidecar (spec §4.8)',
    shownDefault: 'off',
  },
  {
    usage: '--judge-failed-only',
    gymKey: 'judge_failed_only',
    key: 'judgeFailedOnly',
    kind: 'switch',
    meaning: 'recovery: copy the successes of `--rollouts`, re-verify the judge failures of its sidecar (spec §4.6)',
    shownDefault: 'off',
  },
  {
    usage: '--append',
    gymKey: 'append',
    key: 'append',
    kind: 'switch',
    meaning: 'with `--judge-failed-only`: write into an existing output',
    shownDefault: 'off',
  },
  {
    usage: '--retry-invalid-judge-responses',
    gymKey: 'retry_invalid_judge_responses',
    key: 'retryInvalidJudgeResponses',
    kind: 'switch',
    meaning:
      'a `/verify` result flagged `invalid_judge_response` goes to the sidecar as `judge_invalid` (retried like a judge failure), or as terminal `permanent` when it says `invalid_judge_retryable: false`; with `--judge-failed-only`, first moves such rows out of `--rollouts` into its sidecar (this rewrites `--rollouts`, crash-safely) and recovers `judge_invalid` rows too',
    shownDefault: 'off',
  },
  {
    usage: '--retry-terminal-timeouts',
    gymKey: 'retry_terminal_timeouts',
    key: 'retryTerminalTimeouts',
    kind: 'policy',
    meaning:
      '`--resume` and the re-judgment rounds retry sidecar rows of class `timeout_exceeded`, `reference_missing`, `eval_missing`, `transport_ineligible` even when terminal (`skipped` stays terminal; the attempt cap still applies); saved with the run: a later `--resume` keeps it (preview: `reverify status -o OUT --retry-terminal-timeouts`)',
    shownDefault: 'off, or as saved',
  },
  {
    usage: '--no-retry-terminal-timeouts',
    key: 'retryTerminalTimeouts',
    kind: 'negated',
    meaning: 'with `--resume`: turn off a `--retry-terminal-timeouts` saved with the run (saved off from then on)',
    shownDefault: '',
  },
  {
    usage: '--dispatch-longest-first',
    key: 'dispatchLongestFirst',
    kind: 'policy',
    meaning:
      'dispatch the rollouts longest first: the largest saved rows of `--rollouts` (their bytes: the saved answer and trajectory a judge reads) first, ties in file order, so the slowest rows do not start last; saved with the run: a later `--resume` keeps it (see "Order" in docs/usage.md)',
    shownDefault: 'off, or as saved',
  },
  {
    usage: '--no-dispatch-longest-first',
    key: 'dispatchLongestFirst',
    kind: 'negated',
    meaning: 'with `--resume`: turn off a `--dispatch-longest-first` saved with the run',
    shownDefault: '',
  },
  {
    usage: '--max-attempts N',
    key: 'maxAttempts',
    kind: 'int',
    meaning:
      'attempt cap per key, for `--resume` and the re-judgment rounds; saved with the run: a later `--resume` keeps the saved cap (raise it with `--extend-attempts`)',
    shownDefault: '`NEMO_GYM_MAX_ROLLOUT_ATTEMPTS`, else 3',
  },
  {
    usage: '--max-requests N',
    key: 'maxRequests',
    kind: 'int',
    meaning:
      'budget of `/verify` requests of the whole run, every try counted (retries, all rounds); when it is spent the run pauses (no row fails) until `reverify control -o OUT --max-requests M` raises it (see "Request budget" in docs/operating.md)',
    shownDefault: 'none',
  },
  ...STATISTICS_FLAGS,
  {
    usage: '--rejudge-saved KEYS',
    key: 'rejudgeSaved',
    kind: 'path',
    meaning:
      'with `--resume`: before the run goes on, judge again the saved (scored) rows of these keys from their saved answers and settle each in the output (its grading replaced, its other fields kept; an answer without a grade or a failure leaves it as it was): `all`, `T:R[,T:R…]`, or a file of keys (`T:R` lines, or JSONL rows with both indices); see "Saved results re-verified" in docs/usage.md',
    shownDefault: 'none',
  },
  {
    usage: '--dry-run',
    key: 'dryRun',
    kind: 'switch',
    meaning:
      'with `--rejudge-saved`: start nothing and judge nothing; list the saved row each key would settle (`file:line`), or fail with one line naming the first key that cannot settle',
    shownDefault: 'off',
  },
  {
    usage: '--extend-attempts N',
    key: 'extendAttempts',
    kind: 'int',
    meaning:
      'with `--resume`: raise the attempt cap saved with the run (`<stem>_coverage.json`) by N, durably, before planning; rollouts at the old cap run again (preview: `reverify status -o OUT --extend-attempts N`)',
    shownDefault: '0',
  },
  {
    usage: '--no-rejudge',
    key: 'rejudge',
    kind: 'negated',
    meaning: "one pass only: judge failures stay in the sidecar (NeMo Gym's behaviour)",
    shownDefault: 'rounds on',
  },
  {
    usage: '--rejudge-delay S',
    key: 'rejudgeDelayMs',
    kind: 'seconds',
    meaning: `wait before the first re-judgment round; doubles every round, up to ${REJUDGE_DELAY_CEILING_MS / 60_000} min (or S when longer)`,
    shownDefault: seconds(DEFAULT_REJUDGE_DELAY_MS),
  },
  {
    usage: '--repair-truncated',
    key: 'repairTruncated',
    kind: 'switch',
    meaning: 'with `--resume`/`--append`: cut a cut-off last line of the output instead of stopping',
    shownDefault: 'off',
  },
  {
    usage: '--allow-unsafe',
    key: 'allowUnsafe',
    kind: 'switch',
    meaning:
      'with `--resume`: resume even when `--inputs`/`--rollouts` are not the files the run was started with (their saved digests differ)',
    shownDefault: 'off',
  },
  {
    usage: '--no-upload',
    key: 'upload',
    kind: 'negated',
    meaning:
      'upload nothing to the experiment trackers the `--config` names (MLflow: `mlflow_tracking_uri`, `mlflow_experiment_name`, `mlflow_run_name`; W&B: `wandb_project`, `wandb_name`, `wandb_api_key`; see "Upload to MLflow" and "Upload to Weights & Biases" in docs/operating.md)',
    shownDefault: 'uploads when configured',
  },
  {
    usage: '--batch-size N',
    key: 'batchSize',
    kind: 'int',
    meaning:
      "rows per batch activity (larger: fewer workflow tasks; smaller: more frequent commits); when the run re-judges, the first pass's last window of batches goes in quarters, so that their judge failures come back sooner",
    shownDefault: String(DEFAULT_BATCH_SIZE),
  },
  {
    usage: '--request-timeout S',
    key: 'requestTimeoutMs',
    kind: 'seconds',
    meaning: 'timeout of one `/verify` request, seconds (LLM judges are slow)',
    shownDefault: seconds(DEFAULT_REQUEST_TIMEOUT_MS),
  },
  {
    usage: '--heartbeat-timeout S',
    key: null,
    kind: 'seconds',
    meaning: 'how soon the batch of a dead worker is retried elsewhere',
    shownDefault: '30',
    initial: 30,
  },
  {
    usage: '--no-worker',
    key: null,
    kind: 'negated',
    meaning: 'start (or attach to) the run but leave the work to `reverify worker` processes',
    shownDefault: '',
  },
  {
    usage: '--workers N',
    key: null,
    kind: 'int',
    meaning:
      "worker processes on this machine: this one and N − 1 `reverify worker` processes it starts on the run's task queue and stops when it ends (more cores for a verifier faster than one can drive; `--concurrency` stays the ceiling of them all); " +
      `at most ${WORKERS_PER_CORE} per core and one per ${WORKER_RSS_MIB} MiB of available memory`,
    shownDefault: '1',
    initial: 1,
  },
  {
    usage: '--json',
    key: null,
    kind: 'switch',
    meaning:
      'at the end, print the summary as one JSON object on stdout (exit status, outcome, paths, rollouts and attempts, per agent, key metrics); every other line goes to stderr',
    shownDefault: '',
  },
];

/** The long flag of a usage: `--output` of `-o, --output PATH`. */
export function longFlag(f: RunFlag): string {
  return f.usage.split(/[ ,]+/).find((w) => w.startsWith('--'))!;
}

/** Raw option field -> its flag, for messages (`--rejudge-delay`, `--no-rejudge`, ...). */
export const RUN_FLAGS: Readonly<Record<string, string>> = Object.fromEntries(
  RUN_FLAG_LIST.filter((f) => f.key !== null)
    .map((f): [string, string] => [f.key!, longFlag(f)])
    .reverse(), // a policy's own flag, not its `--no-` form
);

/** The option table of docs/usage.md: a header and one row per flag, as the page shows it. */
export function optionTableMarkdown(): string {
  const rows = RUN_FLAG_LIST.map((f) => `| \`${f.usage}\` | ${f.meaning} | ${f.shownDefault ? `${f.shownDefault} ` : ''}|`);
  return ['| option | meaning | default |', '|---|---|---|', ...rows].join('\n');
}
