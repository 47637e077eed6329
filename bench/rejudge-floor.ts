/**
 * What re-judgment costs a full window, by design (issue 33, item 1): a simulation, not a
 * measurement. Four ideal clients keep `--concurrency` requests in flight against a judge whose
 * latencies are log-normal and that answers a share of them as judge failures; no client has any
 * overhead of its own (no batches, no commits, no CPU):
 *
 *   (1) no re-judgment: every row sent once;
 *   (2) rounds (reverify's design): a round's failed rows are sent once the round has drained, after
 *       the round's delay (3 s, then 6 s: `rejudgeDelayMs`);
 *   (3) rounds-last-failure: rounds whose delay counts from the round's last judge failure rather than
 *       from its end (the round still waits to drain);
 *   (4) streamed: each failed row is sent again its own delay after its failure (3 s after the first,
 *       6 s after the second), while the first round still sends.
 *
 *   npx tsx bench/rejudge-floor.ts [--rows 50000] [--concurrency 1024] [--median-ms 300] [--spread 1]
 *                                  [--judge-fail-rate 0.03] [--max-attempts 3] [--delay-ms 3000] [--seeds 5]
 *
 * Prints, per client, the run's length (first request to last answer) and the mean requests in flight
 * over it as a share of the concurrency (the "whole run" figure), medians over the seeds.
 */
import { parseArgs } from 'node:util';
import { rejudgeDelayMs } from '../src/config/run-defaults.js';
import { median } from './lib/median.js';
import { fixed, table } from './lib/table.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    concurrency: { type: 'string', default: '1024' },
    'median-ms': { type: 'string', default: '300' },
    spread: { type: 'string', default: '1' },
    'judge-fail-rate': { type: 'string', default: '0.03' },
    'max-attempts': { type: 'string', default: '3' },
    'delay-ms': { type: 'string', default: '3000' },
    seeds: { type: 'string', default: '5' },
  },
});
const N = Number(values.rows);
const C = Number(values.concurrency);
const MEDIAN = Number(values['median-ms']);
const SIGMA = Number(values.spread);
const FAIL = Number(values['judge-fail-rate']);
const ATTEMPTS = Number(values['max-attempts']);
const DELAY = Number(values['delay-ms']);

/** mulberry32: a seeded uniform in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The judge: a latency (ms) and whether the answer is a judge failure, per request. */
function judge(seed: number): () => { ms: number; failed: boolean } {
  const u = prng(seed);
  return () => {
    const z = Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
    return { ms: MEDIAN * Math.exp(SIGMA * z), failed: u() < FAIL };
  };
}

/** A binary min-heap of events by time. */
class Events<T extends { at: number }> {
  private readonly items: T[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): number {
    return this.items.length > 0 ? this.items[0].at : Infinity;
  }
  push(x: T): void {
    const h = this.items;
    let i = h.push(x) - 1;
    while (i > 0 && h[(i - 1) >> 1].at > h[i].at) {
      [h[i], h[(i - 1) >> 1]] = [h[(i - 1) >> 1], h[i]];
      i = (i - 1) >> 1;
    }
  }
  pop(): T {
    const h = this.items;
    const top = h[0];
    const end = h.pop()!;
    if (h.length > 0) {
      h[0] = end;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const m = l + 1 < h.length && h[l + 1].at < h[l].at ? l + 1 : l;
        if (l >= h.length || h[m].at >= h[i].at) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

type Mode = 'none' | 'rounds' | 'rounds-last-failure' | 'streamed';

/** One run of an ideal client; returns its length (ms) and mean requests in flight over it. */
function simulate(mode: Mode, seed: number): { ms: number; inFlight: number } {
  const answer = judge(seed);
  let fresh = N; // first-round rows not sent yet
  const ready: number[] = []; // attempts (1-based) of failed rows whose delay has passed
  const later = new Events<{ at: number; attempt: number }>(); // failed rows waiting for their delay (streamed)
  let roundFailed: number[] = []; // rounds: attempts of the rows that failed in this round
  let lastFailure = 0;
  const inFlight = new Events<{ at: number; attempt: number }>(); // by the time of the answer
  let now = 0;
  let busy = 0; // request-milliseconds
  let last = 0;
  const send = (attempt: number) => {
    const a = answer();
    busy += a.ms;
    inFlight.push({ at: now + a.ms, attempt: a.failed ? attempt : -1 });
  };
  for (;;) {
    while (inFlight.size < C && (ready.length > 0 || fresh > 0)) {
      if (ready.length > 0) {
        send(ready.pop()! + 1);
      } else {
        fresh--;
        send(1);
      }
    }
    if (inFlight.size === 0 && later.size === 0 && roundFailed.length === 0) break;
    if (inFlight.size === 0 && mode.startsWith('rounds')) {
      // The round has drained: its failures are sent after the round's delay.
      if (mode === 'rounds') now += rejudgeDelayMs(DELAY, roundFailed[0] - 1);
      else now = Math.max(now, lastFailure + rejudgeDelayMs(DELAY, roundFailed[0] - 1));
      ready.push(...roundFailed);
      roundFailed = [];
      continue;
    }
    // The next event: an answer, or (streamed) a failed row's delay ending.
    if (later.peek() < inFlight.peek()) {
      const due = later.pop();
      now = due.at;
      ready.push(due.attempt);
      continue;
    }
    const done = inFlight.pop();
    now = last = done.at;
    if (done.attempt < 1 || done.attempt >= ATTEMPTS || mode === 'none') continue;
    if (mode.startsWith('rounds')) {
      roundFailed.push(done.attempt);
      lastFailure = now;
    } else later.push({ at: now + rejudgeDelayMs(DELAY, done.attempt - 1), attempt: done.attempt });
  }
  return { ms: last, inFlight: busy / last };
}

const seeds = Array.from({ length: Number(values.seeds) }, (_, i) => i + 1);
const rows: string[][] = [];
for (const mode of ['none', 'rounds', 'rounds-last-failure', 'streamed'] as const) {
  const runs = seeds.map((s) => simulate(mode, s));
  rows.push([
    mode,
    fixed(median(runs.map((r) => r.ms / 1000)), 1),
    fixed(median(runs.map((r) => r.inFlight)), 1),
    fixed(median(runs.map((r) => r.inFlight / C)), 2),
  ]);
}
console.log(
  `${N} rows, concurrency ${C}, latency median ${MEDIAN} ms σ ${SIGMA}, judge failures ${FAIL}, ` +
    `${ATTEMPTS} attempts, first delay ${DELAY} ms; medians of ${seeds.length} seeds`,
);
console.log(table(['client', 'first request → last answer, s', 'mean in flight', 'share of the concurrency'], rows));
