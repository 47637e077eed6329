/**
 * Throughput, latency and the failures of each round, from the histories of every invocation that
 * wrote the output as `readHistory` (src/cli/history-events.ts) reads them: each batch activity's
 * start and end, its counts and the summed latency of its `/verify` requests. Counts and times
 * only; the history holds no row content.
 *
 * Throughput counts each row where it was answered: a batch held when its worker stopped (Ctrl-C)
 * counts its rows so far over its own launch, the launch that went on from it only the rows it
 * answered itself (`carried` are not its own); and the time is active time (active-time.ts): a
 * pause between a Ctrl-C and the resume, or between invocations, is not verifying time. Rows an
 * attempt answered before its worker died are in the progress but not in the rate (the history
 * does not time that attempt).
 */
import type { BatchResult } from '../contract/run-spec.js';
import { ActiveClock, activeSeconds } from './active-time.js';
import { histogram } from './stats.js';

/** What the timeline reads of a recorded batch result (`RecordedBatch` of src/cli/history-events.ts). */
export interface RecordedBatch {
  /** 0-based round. */
  round: number;
  /** The invocation of the output that recorded it (0: the first `reverify run` that wrote it; absent: 0), and its batch. */
  invocation?: number;
  batch?: number;
  /** ISO times: when the attempt that recorded the result started (empty: unknown), and when it completed. */
  started: string;
  time: string;
  /** The activity attempt that completed. */
  attempt: number;
  result: Pick<
    BatchResult,
    | 'main'
    | 'failed'
    | 'dropped'
    | 'judgeFailed'
    | 'rejected'
    | 'throttled'
    | 'latencyMsSum'
    | 'latencyCount'
    | 'held'
    | 'sofar'
    | 'carried'
  >;
}

/** The fields of a batch result the timeline reads (`RecordedBatch.result`). */
const TIMELINE_FIELDS = [
  'main',
  'failed',
  'dropped',
  'judgeFailed',
  'rejected',
  'throttled',
  'latencyMsSum',
  'latencyCount',
  'held',
  'sofar',
  'carried',
] as const satisfies readonly (keyof RecordedBatch['result'])[];

/**
 * What the timeline keeps of a batch result: its counts and times, not its per-agent counts, paired
 * units or audit lines (a report reads every batch of a 10^7-row run: 10^4 results at the default
 * batch size, each with a paired unit per task of the batch).
 */
export function timelineResult(r: RecordedBatch['result']): RecordedBatch['result'] {
  const kept: Record<string, unknown> = {};
  for (const f of TIMELINE_FIELDS) if (r[f] !== undefined) kept[f] = r[f];
  return kept as RecordedBatch['result'];
}

/** Time buckets of the rows/s chart. */
const RATE_BUCKETS = 40;
/** Bins of the latency histogram. */
const LATENCY_BINS = 20;

export interface RoundFailures {
  /** 1-based: the invocation of the output (each `reverify run` that started its workflow). */
  invocation: number;
  /** 1-based, as `reverify history` prints it. */
  round: number;
  batches: number;
  rows: number;
  scored: number;
  /** Rows to the failures sidecar, and of them judge failures (planned again) and 4xx rejections. */
  failed: number;
  judgeFailed: number;
  rejected: number;
  notPersisted: number;
  /** Activity attempts beyond the first (a batch retried by Temporal). */
  activityRetries: number;
  /** 429/503 answers met and retried inside the batches. */
  throttled: number;
}

/** One invocation's own throughput: the rows its batches answered over the time they ran. */
export interface InvocationThroughput {
  /** 1-based. */
  invocation: number;
  /** ISO time of its first batch's start. */
  started: string;
  activeSeconds: number;
  /** Rows its batches answered themselves (timed). */
  rows: number;
  rowsPerSecond: number | null;
}

export interface Timeline {
  /** ISO time of the first batch's start. */
  start: string;
  /** Active seconds (a batch running) from `start` to the last batch's end: pauses are left out. */
  seconds: number;
  /** Cumulative rows finished (scored, failed or not persisted) at each batch end, at active seconds. */
  progress: Array<{ t: number; rows: number }>;
  /** Rows/s in equal buckets of active time (a batch's own rows spread evenly over its activity). */
  rate: Array<{ t: number; rowsPerSecond: number }>;
  /** Each invocation's throughput over its own active time, oldest first. */
  invocations: InvocationThroughput[];
  /** All invocations: timed rows over active seconds. */
  rowsPerSecond: number | null;
  /** Mean `/verify` latency per batch, as a histogram weighted by the batch's answered requests. */
  latency: { binMs: number[]; counts: number[]; meanMs: number | null };
  rounds: RoundFailures[];
}

const msOf = (iso: string) => Date.parse(iso);
const rowsOf = (b: RecordedBatch) => b.result.main + b.result.failed + b.result.dropped;
/** Rows answered in this record's own launch or attempt: a held batch's so far, less those carried in. */
function ownRows(b: RecordedBatch): number {
  const s = b.result.sofar;
  const total = b.result.held ? (s ? s.main + s.failed + s.dropped : 0) : rowsOf(b);
  return Math.max(0, total - (b.result.carried ?? 0));
}
const keyOf = (b: RecordedBatch) => `${b.invocation ?? 0}:${b.round}:${b.batch ?? -1}`;

function roundsOf(batches: RecordedBatch[]): RoundFailures[] {
  const rounds = new Map<string, RoundFailures>();
  for (const b of batches) {
    if (b.result.held) continue;
    const key = `${b.invocation ?? 0}:${b.round}`;
    let r = rounds.get(key);
    if (!r)
      rounds.set(
        key,
        (r = {
          invocation: (b.invocation ?? 0) + 1,
          round: b.round + 1,
          batches: 0,
          rows: 0,
          scored: 0,
          failed: 0,
          judgeFailed: 0,
          rejected: 0,
          notPersisted: 0,
          activityRetries: 0,
          throttled: 0,
        }),
      );
    r.batches++;
    r.rows += rowsOf(b);
    r.scored += b.result.main;
    r.failed += b.result.failed;
    r.judgeFailed += b.result.judgeFailed;
    r.rejected += b.result.rejected;
    r.notPersisted += b.result.dropped;
    r.activityRetries += Math.max(0, b.attempt - 1);
    r.throttled += b.result.throttled ?? 0;
  }
  return [...rounds.values()].sort((a, b) => a.invocation - b.invocation || a.round - b.round);
}

function latencyOf(batches: RecordedBatch[]): Timeline['latency'] {
  const means: number[] = [];
  const weights: number[] = [];
  let sum = 0;
  let count = 0;
  for (const b of batches) {
    if (!(b.result.latencyCount > 0)) continue;
    means.push(b.result.latencyMsSum / b.result.latencyCount);
    weights.push(b.result.latencyCount);
    sum += b.result.latencyMsSum;
    count += b.result.latencyCount;
  }
  if (means.length === 0) return { binMs: [], counts: [], meanMs: null };
  const hi = Math.max(...means) || 1;
  const width = hi / LATENCY_BINS;
  const counts = new Array<number>(LATENCY_BINS).fill(0);
  means.forEach((m, i) => (counts[histogram([m], 0, hi, LATENCY_BINS).indexOf(1)] += weights[i]));
  return { binMs: counts.map((_, i) => Math.round(i * width * 10) / 10), counts, meanMs: sum / count };
}

/** Cumulative rows at each record's end (active seconds): a batch's rows once, where they were answered. */
function progressOf(batches: RecordedBatch[], clock: ActiveClock): Timeline['progress'] {
  const heldOwn = new Map<string, number>();
  let done = 0;
  const progress = [{ t: 0, rows: 0 }];
  for (const b of [...batches].sort((x, y) => msOf(x.time) - msOf(y.time))) {
    const key = keyOf(b);
    if (b.result.held) {
      heldOwn.set(key, (heldOwn.get(key) ?? 0) + ownRows(b));
      done += ownRows(b);
    } else {
      done += Math.max(0, rowsOf(b) - (heldOwn.get(key) ?? 0));
      heldOwn.delete(key);
    }
    progress.push({ t: clock.at(msOf(b.time)), rows: done });
  }
  return progress;
}

/** Each record's own rows spread evenly over its activity, in equal buckets of active time. */
function rateOf(batches: RecordedBatch[], clock: ActiveClock, startOf: (b: RecordedBatch) => number): Timeline['rate'] {
  const seconds = Math.max(0.001, clock.seconds);
  const width = seconds / RATE_BUCKETS;
  const rows = new Array<number>(RATE_BUCKETS).fill(0);
  for (const b of batches) {
    const s = clock.at(startOf(b));
    const e = Math.max(s, clock.at(msOf(b.time)));
    const n = ownRows(b);
    for (let k = 0; k < RATE_BUCKETS; k++) {
      const lo = k * width;
      const hi = lo + width;
      const overlap =
        e > s ? Math.max(0, Math.min(e, hi) - Math.max(s, lo)) / (e - s) : s >= lo && (s < hi || k === RATE_BUCKETS - 1) ? 1 : 0;
      rows[k] += n * overlap;
    }
  }
  return rows.map((r, k) => ({ t: Math.round((k + 0.5) * width * 1000) / 1000, rowsPerSecond: r / width }));
}

/** Each invocation's timed rows over its own active time. */
function invocationsOf(batches: RecordedBatch[], startOf: (b: RecordedBatch) => number): InvocationThroughput[] {
  const by = new Map<number, RecordedBatch[]>();
  for (const b of batches) by.set(b.invocation ?? 0, [...(by.get(b.invocation ?? 0) ?? []), b]);
  return [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, bs]) => {
      const secs = activeSeconds(bs.map((b) => [startOf(b), msOf(b.time)] as const));
      const rows = bs.reduce((sum, b) => sum + ownRows(b), 0);
      return {
        invocation: i + 1,
        started: new Date(Math.min(...bs.map(startOf))).toISOString(),
        activeSeconds: Math.round(secs * 1000) / 1000,
        rows,
        rowsPerSecond: secs > 0 ? Math.round((rows / secs) * 10) / 10 : null,
      };
    });
}

/** The timeline of the batches of every invocation; null when the histories have none. */
export function historyTimeline(recorded: RecordedBatch[]): Timeline | null {
  const batches = recorded.filter((b) => b.time);
  if (batches.length === 0) return null;
  const startOf = (b: RecordedBatch) => msOf(b.started || b.time);
  const clock = new ActiveClock(batches.map((b) => [startOf(b), msOf(b.time)] as const));
  const seconds = Math.max(0.001, clock.seconds);
  const timed = batches.reduce((sum, b) => sum + ownRows(b), 0);
  return {
    start: new Date(Math.min(...batches.map(startOf))).toISOString(),
    seconds,
    progress: progressOf(batches, clock),
    rate: rateOf(batches, clock, startOf),
    invocations: invocationsOf(batches, startOf),
    rowsPerSecond: clock.seconds > 0 ? Math.round((timed / clock.seconds) * 10) / 10 : null,
    latency: latencyOf(batches.filter((b) => !b.result.held)),
    rounds: roundsOf(batches),
  };
}
