import type { Progress } from '../contract/run-spec.js';
import { NO_LIVE_BATCHES, type LiveBatches } from './live-batches.js';

/** Rows per second over a sliding time window, for the rate and the ETA. */
export class RateMeter {
  private samples: Array<{ t: number; n: number }> = [];
  constructor(private readonly windowMs = 15_000) {}

  add(t: number, n: number): void {
    this.samples.push({ t, n });
    while (this.samples.length > 2 && t - this.samples[0].t > this.windowMs) this.samples.shift();
  }

  perSecond(): number {
    if (this.samples.length < 2) return 0;
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    return b.t > a.t ? ((b.n - a.n) * 1000) / (b.t - a.t) : 0;
  }
}

/** `42s`, `3m05s`, `2h07m`; `?` when not finite. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** What the running batches add (their heartbeats), and the time now (for the re-judgment timer). */
export interface LiveView {
  live?: LiveBatches;
  now?: number;
}

/** Attempts finished, whatever their outcome: committed plus answered inside running batches, never above the plan. */
export function rowsFinished(p: Progress, live: LiveBatches = NO_LIVE_BATCHES): number {
  return Math.min(p.planned, p.done + p.failed + p.dropped + live.finished);
}

/**
 * Rollouts (keys) settled: every key planned, less those whose attempt of the current round is not
 * answered yet (later rounds plan some keys again: their earlier attempts settled nothing).
 */
export function rolloutsSettled(p: Progress, finished: number): { settled: number; keys: number } {
  const keys = p.keys ?? p.planned;
  return { settled: Math.max(0, Math.min(keys, keys - (p.planned - finished))), keys };
}

/** The wait before the next re-judgment round, with the time left when the run says when it ends. */
function rejudgeWait(p: Progress, now: number): string {
  const left = typeof p.rejudgeAt === 'number' ? `: starts in ${duration(Math.max(0, (p.rejudgeAt - now) / 1000))}` : '…';
  return `waiting to re-judge (round ${p.round + 2})${left}`;
}

/** A failure reason cut to fit one line. */
const short = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `[######......]  120/400 rollouts  117 ok  3 failed  45.2 rows/s  ETA 6s` (rows/s and ETA in attempts) */
export function progressLine(p: Progress, rate: number, width = 24, view: LiveView = {}): string {
  const live = view.live ?? NO_LIVE_BATCHES;
  if (p.phase === 'rejudge-wait') return rejudgeWait(p, view.now ?? Date.now());
  if (p.phase !== 'verify') return `${p.phase}…`;
  const finished = rowsFinished(p, live);
  const { settled, keys } = rolloutsSettled(p, finished);
  const frac = keys > 0 ? Math.min(1, settled / keys) : 1;
  const fill = Math.round(frac * width);
  const bar = '#'.repeat(fill) + '.'.repeat(width - fill);
  const eta = rate > 0 ? duration((p.planned - finished) / rate) : '?';
  const limit = p.effectiveConcurrency < p.concurrency ? `  concurrency ${p.effectiveConcurrency}/${p.concurrency}` : '';
  const round = p.round > 0 ? `  round ${p.round + 1}` : '';
  const attempts = p.planned !== keys ? `  attempts ${finished}/${p.planned}` : '';
  const paused = p.budgetPaused ? '  PAUSED: request budget spent' : p.paused ? '  PAUSED' : '';
  const requests = p.requests && p.requests.max !== null ? `  requests ${p.requests.used}/${p.requests.max}` : '';
  const outage = live.outage !== null ? `  waiting: ${short(live.outage)}` : '';
  const counts = `${p.done + live.done} ok  ${p.failed + live.failed} failed`;
  return `[${bar}] ${settled}/${keys} rollouts  ${counts}  ${rate.toFixed(1)} rows/s  ETA ${eta}${round}${attempts}${limit}${requests}${paused}${outage}`;
}
