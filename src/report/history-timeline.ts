/**
 * Throughput, latency and the failures of each round, from a run's history as `readHistory`
 * (src/cli/history-events.ts) reads it: each batch activity's start and end, its counts and the
 * summed latency of its `/verify` requests. Counts and times only; the history holds no row content.
 */
import type { BatchResult } from '../contract/run-spec.js';
import { histogram } from './stats.js';

/** What the timeline reads of a recorded batch result (`RecordedBatch` of src/cli/history-events.ts). */
export interface RecordedBatch {
  /** 0-based round. */
  round: number;
  /** ISO times: when the attempt that recorded the result started (empty: unknown), and when it completed. */
  started: string;
  time: string;
  /** The activity attempt that completed. */
  attempt: number;
  result: Pick<BatchResult, 'main' | 'failed' | 'dropped' | 'judgeFailed' | 'rejected' | 'throttled' | 'latencyMsSum' | 'latencyCount'>;
}

/** Time buckets of the rows/s chart. */
const RATE_BUCKETS = 40;
/** Bins of the latency histogram. */
const LATENCY_BINS = 20;

export interface RoundFailures {
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

export interface Timeline {
  /** ISO time of the first batch's start. */
  start: string;
  /** Seconds from `start` to the last batch's end. */
  seconds: number;
  /** Cumulative rows finished (scored, failed or not persisted) at each batch end. */
  progress: Array<{ t: number; rows: number }>;
  /** Rows/s in equal time buckets (a batch's rows spread evenly over its activity). */
  rate: Array<{ t: number; rowsPerSecond: number }>;
  /** Mean `/verify` latency per batch, as a histogram weighted by the batch's answered requests. */
  latency: { binMs: number[]; counts: number[]; meanMs: number | null };
  rounds: RoundFailures[];
}

const msOf = (iso: string) => Date.parse(iso);
const rowsOf = (b: RecordedBatch) => b.result.main + b.result.failed + b.result.dropped;

function roundsOf(batches: RecordedBatch[]): RoundFailures[] {
  const rounds = new Map<number, RoundFailures>();
  for (const b of batches) {
    let r = rounds.get(b.round);
    if (!r)
      rounds.set(
        b.round,
        (r = {
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
  return [...rounds.values()].sort((a, b) => a.round - b.round);
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

/** The timeline of a run's batches; null when the history has none. */
export function historyTimeline(recorded: RecordedBatch[]): Timeline | null {
  const batches = recorded.filter((b) => b.time);
  if (batches.length === 0) return null;
  const startOf = (b: RecordedBatch) => msOf(b.started || b.time);
  const t0 = Math.min(...batches.map(startOf));
  const end = Math.max(...batches.map((b) => msOf(b.time)));
  const seconds = Math.max(0.001, (end - t0) / 1000);
  let done = 0;
  const progress = [{ t: 0, rows: 0 }];
  for (const b of [...batches].sort((x, y) => msOf(x.time) - msOf(y.time))) {
    done += rowsOf(b);
    progress.push({ t: (msOf(b.time) - t0) / 1000, rows: done });
  }
  const width = seconds / RATE_BUCKETS;
  const rows = new Array<number>(RATE_BUCKETS).fill(0);
  for (const b of batches) {
    const s = (startOf(b) - t0) / 1000;
    const e = Math.max(s, (msOf(b.time) - t0) / 1000);
    const n = rowsOf(b);
    for (let k = 0; k < RATE_BUCKETS; k++) {
      const lo = k * width;
      const hi = lo + width;
      const overlap =
        e > s ? Math.max(0, Math.min(e, hi) - Math.max(s, lo)) / (e - s) : s >= lo && (s < hi || k === RATE_BUCKETS - 1) ? 1 : 0;
      rows[k] += n * overlap;
    }
  }
  return {
    start: new Date(t0).toISOString(),
    seconds,
    progress,
    rate: rows.map((r, k) => ({ t: Math.round((k + 0.5) * width * 1000) / 1000, rowsPerSecond: r / width })),
    latency: latencyOf(batches),
    rounds: roundsOf(batches),
  };
}
