/**
 * The run's state, carried across continue-as-new (counts, cursors, committed lengths; never rows),
 * and its arithmetic: the first state, upgrading a carried one, adding a batch's counts (the
 * progress query's answer: progress.ts).
 */
import type {
  AgentCounts,
  AgentRollouts,
  BatchCounts,
  BatchResult,
  OutputPaths,
  Phase,
  PlanSummary,
  RunSpec,
} from '../src/contract/run-spec.js';
import type { NoiseSampleView } from '../src/contract/run-result.js';
import type { RowCounts } from '../src/contract/run-view.js';
import type { RunEstimate } from '../src/stats/run-estimate.js';
import type { StoppedEarly } from '../src/contract/stop-rules.js';
import type { InputIdentity } from '../src/contract/plan-summary.js';
import type { Segment, Unplanned } from './segments.js';

/** A batch activity in flight: its round, its rows and the `/verify` slots it holds. */
export interface InFlight {
  round: number;
  rows: number;
  slots: number;
  /** `/verify` requests it may make (absent: no budget). */
  allowance?: number;
}

/** State carried across continue-as-new: counts, cursors and committed lengths; never rows. */
export interface RunState {
  phase: Phase;
  generation: number;
  /** The ceiling of `/verify` requests in flight (`--concurrency`, or set by `reverify control`). */
  concurrency: number;
  /** The limit in force, adapted to the verifier's health (see adaptive-limit.ts). */
  effective: number;
  baselineLatencyMs: number | null;
  /** Answers of small batches pooled until latency can be judged on them (adaptive-limit.ts; absent: none). */
  pendingLatency?: { msSum: number; count: number };
  /** The verifier has throttled this run: the limit now grows in small steps (adaptive-limit.ts; absent: not yet). */
  throttledOnce?: boolean;
  /** Paused by an operator: no new batch starts; those in flight finish. */
  paused: boolean;
  /** `--max-requests` (or as set by `reverify control`); null: no budget (see budget.ts). */
  maxRequests: number | null;
  /** `/verify` requests made by the run's batches, every try (counted since this version). */
  requestsUsed: number;
  /** Batches of this round that spent their allowance before their last row: launched again first. */
  held: number[];
  /** Waiting for `reverify control --max-requests`: the budget is spent and work is left. */
  budgetPaused: boolean;
  outputs: OutputPaths | null;
  /** The first plan (a re-judgment's plans are segments: `segments`). */
  plan: PlanSummary | null;
  /** The latest re-judgment round launched (0: the first pass). */
  round: number;
  /** Rows planned over all rounds so far (attempts). */
  planned: number;
  /** Judge failures committed and not planned again (at the attempt cap, or not re-judged). */
  roundJudgeFailed: number;
  /** The plans the window launches from, one numbering of batches (segments.ts; absent: not verifying yet). */
  segments?: Segment[];
  /** Committed batches whose rows were selected for a next round and are not planned yet (rejudge.ts). */
  unplanned?: Unplanned[];
  /** The latest re-judgment round announced in the messages (once per round: its later segments join it silently). */
  rejudgeAnnounced?: number;
  /** The latest round whose failures were said to be all at the attempt cap (once per round). */
  capAnnounced?: number;
  /** The rollouts a `--stop-when` left unstarted are recorded (stop-rules.ts). */
  unstartedRecorded?: boolean;
  /** Successful rows of --rollouts copied into the output (recovery mode). */
  seeded: number;
  forceWarning: string | null;
  messages: string[];
  /** Batches launched so far (each segment's cursor is its own: segments.ts). */
  batchesLaunched: number;
  /** Lengths of the main output and the sidecar after the last recorded commit. */
  mainLength: number;
  sidecarLength: number;
  /** Part files of the last recorded commit, deleted by the next one. */
  obsolete: string[];
  /** Rows in the main output after the last recorded commit (null: not known, a run of an earlier version). */
  mainRows: number | null;
  /** Length of the sidecar when this run opened it: the rows past it were routed there by this run. */
  sidecarOpenedAt: number | null;
  /** Length of the main output when the first re-judgment round began (null: none began). */
  mainAtRejudge: number | null;
  /** Keys planned by the first round (later rounds plan some of them again). */
  keysPlanned: number | null;
  /** Keys per agent planned by the first round (null: not known, a run of an earlier version). */
  keysPerAgent: Record<string, number> | null;
  /** Keys per agent planned again by later rounds, each superseding one sidecar row (null: not known). */
  replannedPerAgent: Record<string, number> | null;
  totals: BatchCounts;
  /** Rollouts the run covers (the first plan's keys; null: the files' keys count, see coverage.ts). */
  expectedKeys: number | null;
  /** The first plan's identity digests of a plain run's files, saved in its coverage file (absent: none). */
  inputIdentity?: InputIdentity;
  /** The coverage file was written when the outputs opened: it is written again at the end, or on failure. */
  coverageOpened: boolean;
  /** The live paired estimate of the first round (src/stats/run-estimate.ts; null: none, `--confidence` absent, ATIF, recovery). */
  estimate: RunEstimate | null;
  /** A `--stop-when` rule fired (workflows/stop-rules.ts): no new first-pass batch starts (absent or null: none). */
  stoppedEarly?: StoppedEarly | null;
  /** Length of the main output when this run opened it (or once its saved rows were settled): rows past it were scored by this run (absent: earlier versions). */
  mainOpenedAt?: number;
  /** `--noise-sample`: the judge noise floor (workflows/noise-sample.ts; absent: none asked, or not taken yet). */
  noise?: NoiseSampleView;
  /** When the next re-judgment segment is due (workflow time, epoch ms); set only while the window waits for it (query-only). */
  rejudgeAt?: number | null;
  /** The round that starts then (1-based, as said; query-only). */
  rejudgeRound?: number;
  /**
   * Rows of batches that ended and wait for their commit, by batch (query-only: absent when none,
   * as at every continue-as-new, which waits for the commits). See src/contract/run-view.ts.
   */
  landed?: Record<number, RowCounts>;
  /**
   * Rows answered so far by held batches (stopped with their worker, or out of budget), by batch:
   * counted by the live views until the launch that goes on from them reports them (query-only).
   */
  heldRows?: Record<number, RowCounts>;
}

export function initialState(spec: RunSpec): RunState {
  return {
    phase: 'guard',
    generation: 0,
    concurrency: spec.concurrency,
    effective: spec.concurrency,
    baselineLatencyMs: null,
    paused: false,
    maxRequests: null,
    requestsUsed: 0,
    held: [],
    budgetPaused: false,
    outputs: null,
    plan: null,
    round: 0,
    planned: 0,
    roundJudgeFailed: 0,
    seeded: 0,
    forceWarning: null,
    messages: [],
    batchesLaunched: 0,
    mainLength: 0,
    sidecarLength: 0,
    obsolete: [],
    mainRows: null,
    sidecarOpenedAt: null,
    mainAtRejudge: null,
    keysPlanned: null,
    keysPerAgent: null,
    replannedPerAgent: {},
    expectedKeys: null,
    coverageOpened: false,
    estimate: null,
    totals: { main: 0, failed: 0, dropped: 0, rejected: 0, judgeFailed: 0, perAgent: {}, throttled: 0, latencyMsSum: 0, latencyCount: 0 },
  };
}

/** The first round's plan: its rows are the run's keys (later rounds plan some of them again). */
export function setFirstPlan(st: RunState, plan: PlanSummary): void {
  st.plan = plan;
  st.planned = plan.rows;
  st.keysPlanned = plan.rows;
  st.keysPerAgent = { ...plan.rowsPerAgent };
  st.expectedKeys = plan.keys ?? null;
  if (plan.identity) st.inputIdentity = plan.identity;
}

/**
 * Keys of this run still missing from the score: every failed attempt left a sidecar row, and each
 * key a later round planned again had exactly one of them superseded by its new attempt (or was a
 * withdrawn re-judgment, which wrote nothing).
 */
export function keysMissing(st: RunState): number {
  return Math.max(0, st.totals.failed + (st.totals.withdrawn ?? 0) - (st.planned - (st.keysPlanned ?? st.planned)));
}

/**
 * Per agent, what became of the rollouts (keys) this run planned: scored, in the sidecar (failed
 * attempts), not persisted, still missing from the score (`keysMissing` per agent). Null for a
 * run whose per-agent plan is not known (continued from an earlier version).
 */
export function rolloutsPerAgent(st: RunState): Record<string, AgentRollouts> | null {
  const keys = st.keysPerAgent;
  const replanned = st.replannedPerAgent;
  if (keys === null || replanned === null) return null;
  const agents = [...new Set([...Object.keys(keys), ...Object.keys(st.totals.perAgent)])].sort();
  return Object.fromEntries(
    agents.map((agent) => {
      const c = st.totals.perAgent[agent] ?? { done: 0, failed: 0, dropped: 0, rewardSum: 0 };
      // A withdrawn re-judgment wrote nothing, and is missing until a later round settles it.
      const missing = Math.max(0, c.failed + (c.withdrawn ?? 0) - (replanned[agent] ?? 0));
      return [agent, { planned: keys[agent] ?? 0, scored: c.done, sidecar: c.failed, notPersisted: c.dropped, missing }];
    }),
  );
}

export function addCounts(into: RunState['totals'], b: BatchResult): void {
  into.main += b.main;
  into.failed += b.failed;
  into.dropped += b.dropped;
  into.rejected += b.rejected;
  into.judgeFailed += b.judgeFailed;
  if (b.withdrawn) into.withdrawn = (into.withdrawn ?? 0) + b.withdrawn;
  into.throttled += b.throttled;
  into.latencyMsSum += b.latencyMsSum;
  into.latencyCount += b.latencyCount;
  for (const [agent, c] of Object.entries(b.perAgent)) {
    const t: AgentCounts = (into.perAgent[agent] ??= { done: 0, failed: 0, dropped: 0, rewardSum: 0 });
    t.done += c.done;
    t.failed += c.failed;
    t.dropped += c.dropped;
    t.rewardSum += c.rewardSum;
    if (c.withdrawn) t.withdrawn = (t.withdrawn ?? 0) + c.withdrawn;
  }
}

/**
 * State carried by a continue-as-new from an older version of this workflow lacks the fields added
 * since: give them the values that reproduce the old behaviour, so the run goes on (and replays)
 * unchanged. Add a line here with every new field of RunState.
 */
export function upgradeState(st: RunState): RunState {
  st.effective ??= st.concurrency;
  st.baselineLatencyMs ??= null;
  st.paused ??= false;
  st.maxRequests ??= null;
  st.requestsUsed ??= 0;
  st.held ??= [];
  st.budgetPaused ??= false;
  st.totals.throttled ??= 0;
  st.totals.latencyMsSum ??= 0;
  st.totals.latencyCount ??= 0;
  st.mainRows ??= null;
  st.sidecarOpenedAt ??= null;
  st.mainAtRejudge ??= null;
  st.keysPlanned ??= null;
  // Known for a carried first round: its plan is the first plan, and nothing was planned again.
  st.keysPerAgent ??= st.round === 0 && st.plan ? { ...st.plan.rowsPerAgent } : null;
  st.replannedPerAgent ??= st.round === 0 ? {} : null;
  st.expectedKeys ??= null;
  st.coverageOpened ??= false;
  st.estimate ??= null;
  return st;
}

/**
 * A batch ended: its rows count as answered until its commit adds them to the totals (`committed`).
 * Its requests are in `requestsUsed` already.
 */
export function landed(st: RunState, b: BatchResult): void {
  (st.landed ??= {})[b.batch] = { main: b.main, failed: b.failed, dropped: b.dropped, requests: 0 };
  if (st.heldRows?.[b.batch]) {
    delete st.heldRows[b.batch];
    if (Object.keys(st.heldRows).length === 0) delete st.heldRows;
  }
}

/**
 * A batch of round `round` starts: the run's latest round. The main output's length before the
 * first re-judged row is kept: only rows past it can score a key that this run routed to the
 * sidecar (the terminal's end-of-run alarms, src/cli/missing-alarms.ts).
 */
export function enteredRound(st: RunState, round: number): void {
  if (round <= st.round) return;
  st.round = round;
  st.mainAtRejudge ??= st.mainLength;
}

/** A batch was held: its rows so far count as answered until it lands. */
export function heldWith(st: RunState, b: BatchResult): void {
  if (b.sofar) (st.heldRows ??= {})[b.batch] = { ...b.sofar, requests: 0 };
}

/** A batch's commit added its rows to the totals. */
export function committed(st: RunState, b: BatchResult): void {
  if (!st.landed) return;
  delete st.landed[b.batch];
  if (Object.keys(st.landed).length === 0) delete st.landed;
}
