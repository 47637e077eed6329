/**
 * Timing a run from the reference server's side: its `GET /stats` stamps when the first `/verify`
 * arrived and when the last one was answered, whoever sent them; polled every few milliseconds, it
 * gives the requests in flight over that window.
 */
import { appendFileSync } from 'node:fs';
import { Client } from 'undici';
import { sleep } from './procs.js';

/** The part of the reference server's `GET /stats` used here. */
export interface ServerStats {
  requests: { verify: number; aggregate_metrics: number; reverify_mode: number };
  verify_in_flight: number;
  peak_verify_in_flight: number;
  /** Epoch ms of the first `/verify` received and of the last answered (src/reference-server/server-stats.ts). */
  verify_first_at_ms: number | null;
  verify_last_answered_at_ms: number | null;
  verify_outcomes: Record<string, number>;
  /** From a row's n-th judge failure to its next request (src/reference-server/server-stats.ts). */
  rejudge_gaps?: Record<string, { count: number; p50_ms: number; p90_ms: number; max_ms: number }>;
}

export async function getStats(client: Client): Promise<ServerStats> {
  const res = await client.request({ method: 'GET', path: '/stats' });
  return (await res.body.json()) as ServerStats;
}

/** What a `VerifyWindow` observed (times are `performance.now()` milliseconds). */
export interface WindowResult {
  /** When the server received the first `/verify` (its stamp). */
  firstMs: number;
  /**
   * When the server answered the last `/verify` (its stamp), not when polling stopped: a command
   * that writes its outputs for a while after its last answer is not timed for that.
   */
  lastMs: number;
  /** Uncertainty of each end: the two processes' clocks, read as epoch milliseconds. */
  resolutionMs: number;
  requests: number;
  peakInFlight: number;
  /** Mean of `verify_in_flight` over the polls between the first and the last /verify (slot use). */
  meanInFlight: number;
  /**
   * The same mean for each tenth of the run's requests (by `/verify` received when polled):
   * `[0]` while the first 10 % were sent, … `[9]` while the last 10 % were (NaN where no poll fell).
   */
  inFlightByTenth: number[];
  /** Mean of `verify_in_flight` over the polls from the first /verify to the last answer (its tail and re-judgment rounds included). */
  wholeMeanInFlight: number;
  /**
   * With re-judgment rounds (more requests than `target`): the first round's last answer (the first
   * poll with `target` requests received and none in flight) and the next round's first request
   * (the first poll with more than `target`); undefined without.
   */
  roundGap?: { lastAnswerMs: number; nextRequestMs: number };
  outcomes: Record<string, number>;
  rejudgeGaps: NonNullable<ServerStats['rejudge_gaps']>;
}

/**
 * How far two processes' `performance.timeOrigin + performance.now()` may differ: each is within
 * 0.1–2.4 ms of `Date.now()` on this machine (measured with `node -e` in fresh processes).
 */
const CLOCK_OFFSET_MS = 3;

/** A file to append `seconds-since-first-request in-flight requests` to at every poll (BENCH_INFLIGHT_SERIES; unset: none): where a run's window empties. */
const SERIES = process.env.BENCH_INFLIGHT_SERIES;

/** When polling may end besides every request answered: e.g. once the command that sends them has exited (re-judgment rounds follow the first). */
export interface WindowOptions {
  settled?: () => boolean;
}

/**
 * Polls `/stats` until `target` `/verify` requests have been received and answered. The server's
 * counters must start at zero (a fresh reference server per measurement).
 */
export class VerifyWindow {
  private readonly client: Client;
  private stopped = false;
  private readonly done: Promise<WindowResult>;

  constructor(
    url: string,
    target: number,
    intervalMs = 25,
    private readonly opts: WindowOptions = {},
  ) {
    this.client = new Client(url, { pipelining: 1, keepAliveTimeout: 60_000 });
    this.done = this.poll(target, intervalMs);
    this.done.catch(() => undefined);
  }

  /** Resolves when every one of the `target` requests has been answered. */
  result(): Promise<WindowResult> {
    return this.done;
  }

  /** Stops polling (the result then rejects if it was not reached). */
  async close(): Promise<void> {
    this.stopped = true;
    await this.done.catch(() => undefined);
    await this.client.close();
  }

  private async poll(target: number, intervalMs: number): Promise<WindowResult> {
    let prev = performance.now();
    /** When a poll first saw a request (the series' origin). */
    let sawFirst: number | undefined;
    let inFlightSum = 0;
    let inFlightPolls = 0;
    const tenthSum = new Array<number>(10).fill(0);
    const tenthPolls = new Array<number>(10).fill(0);
    /** Every poll from the first request on: when, and how many were in flight (the whole run's mean is cut at the last answer). */
    const whole: Array<[number, number]> = [];
    let lastAnswerMs: number | undefined;
    let nextRequestMs: number | undefined;
    const settled = this.opts.settled ?? (() => true);
    for (;;) {
      if (this.stopped) throw new Error('stats polling stopped before all requests were answered');
      const at = performance.now();
      let s: ServerStats;
      try {
        s = await getStats(this.client);
      } catch {
        await sleep(intervalMs);
        continue;
      }
      const seen = (performance.now() + at) / 2;
      if (sawFirst === undefined && s.requests.verify > 0) sawFirst = (prev + seen) / 2;
      if (sawFirst !== undefined && s.requests.verify < target) {
        inFlightSum += s.verify_in_flight;
        inFlightPolls++;
        const tenth = Math.min(9, Math.floor((s.requests.verify * 10) / target));
        tenthSum[tenth] += s.verify_in_flight;
        tenthPolls[tenth]++;
      }
      if (sawFirst !== undefined && SERIES)
        appendFileSync(SERIES, `${((seen - sawFirst) / 1000).toFixed(2)} ${s.verify_in_flight} ${s.requests.verify}\n`);
      if (sawFirst !== undefined) whole.push([seen, s.verify_in_flight]);
      if (lastAnswerMs === undefined && s.requests.verify >= target && s.verify_in_flight === 0) lastAnswerMs = (prev + seen) / 2;
      if (nextRequestMs === undefined && s.requests.verify > target) nextRequestMs = (prev + seen) / 2;
      if (s.requests.verify >= target && s.verify_in_flight === 0 && settled()) {
        const [first, last] = [s.verify_first_at_ms, s.verify_last_answered_at_ms].map((ms) => (ms ?? NaN) - performance.timeOrigin);
        const untilLast = whole.filter(([t]) => t <= last);
        return {
          firstMs: first,
          lastMs: last,
          resolutionMs: CLOCK_OFFSET_MS,
          requests: s.requests.verify,
          peakInFlight: s.peak_verify_in_flight,
          meanInFlight: inFlightPolls > 0 ? inFlightSum / inFlightPolls : NaN,
          inFlightByTenth: tenthSum.map((sum, i) => (tenthPolls[i] > 0 ? sum / tenthPolls[i] : NaN)),
          wholeMeanInFlight: untilLast.length > 0 ? untilLast.reduce((a, [, n]) => a + n, 0) / untilLast.length : NaN,
          ...(lastAnswerMs !== undefined && nextRequestMs !== undefined ? { roundGap: { lastAnswerMs, nextRequestMs } } : {}),
          outcomes: s.verify_outcomes,
          rejudgeGaps: s.rejudge_gaps ?? {},
        };
      }
      prev = seen;
      await sleep(intervalMs);
    }
  }
}

/** `in flight: mean M (by tenth of the requests: t0 … t9), whole run W, peak P[, round gap G s]`. */
export function describeInFlight(w: WindowResult): string {
  const one = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const gap =
    w.roundGap === undefined
      ? ''
      : `, last first-round answer → first re-judgment request ${((w.roundGap.nextRequestMs - w.roundGap.lastAnswerMs) / 1000).toFixed(2)} s`;
  const sec = (ms: number) => (ms / 1000).toFixed(2);
  const gaps = Object.entries(w.rejudgeGaps).map(
    ([n, g]) => `after failure ${n}: ${g.count} rows, p50 ${sec(g.p50_ms)} s, p90 ${sec(g.p90_ms)} s, max ${sec(g.max_ms)} s`,
  );
  return (
    `in flight: mean ${one(w.meanInFlight)} (by tenth of the requests: ${w.inFlightByTenth.map(one).join(' ')}), ` +
    `whole run ${one(w.wholeMeanInFlight)}, peak ${w.peakInFlight}${gap}` +
    (gaps.length > 0 ? `; judge failure → its next request: ${gaps.join('; ')}` : '')
  );
}
