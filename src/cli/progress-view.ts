import type { Progress } from '../contract/run-spec.js';
import { etaSeconds, runView, type RunView } from '../contract/run-view.js';
import { deltaText } from '../contract/estimate-text.js';
import { stoppingText } from '../contract/stop-rules.js';

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

/** The run's view (run-view.ts; default: its committed and ended batches), an outage's reason, the time now. */
export interface LiveView {
  view?: RunView;
  outage?: string | null;
  now?: number;
}

/** The wait before the next re-judgment round, with the time left when the run says when it ends. */
function rejudgeWait(p: Progress, now: number): string {
  const left = typeof p.rejudgeAt === 'number' ? `: starts in ${duration(Math.max(0, (p.rejudgeAt - now) / 1000))}` : '…';
  return `waiting to re-judge (round ${p.rejudgeRound ?? p.round + 2})${left}`;
}

/** `round 2`, or `rounds 1–2` while the older round still runs (re-judgment streams into it). */
export function roundsText(p: Pick<Progress, 'round' | 'oldestRound'>): string {
  return p.oldestRound !== undefined && p.oldestRound < p.round ? `rounds ${p.oldestRound + 1}–${p.round + 1}` : `round ${p.round + 1}`;
}

/** A failure reason cut to fit one line. */
const short = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `[######......]  120/400 rollouts  117 ok  3 failed  45.2 rows/s  ETA 6s` (rows/s and ETA in attempts) */
export function progressLine(p: Progress, rate: number, width = 24, live: LiveView = {}): string {
  if (p.phase === 'rejudge-wait') return rejudgeWait(p, live.now ?? Date.now());
  if (p.phase !== 'verify') return `${p.phase}…`;
  const v = live.view ?? runView(p);
  const frac = v.keys > 0 ? Math.min(1, v.settled / v.keys) : 1;
  const fill = Math.round(frac * width);
  const bar = '#'.repeat(fill) + '.'.repeat(width - fill);
  const eta = etaSeconds(v, rate);
  const limit = p.effectiveConcurrency < p.concurrency ? `  concurrency ${p.effectiveConcurrency}/${p.concurrency}` : '';
  const round = p.round > 0 ? `  ${roundsText(p)}` : '';
  const attempts = p.planned !== v.keys ? `  attempts ${v.answered}/${p.planned}` : '';
  const paused = p.budgetPaused ? '  PAUSED: request budget spent' : p.paused ? '  PAUSED' : '';
  const requests = p.requests && p.requests.max !== null ? `  requests ${v.requests.used}/${p.requests.max}` : '';
  const outage = live.outage ? `  waiting: ${short(live.outage)}` : '';
  const counts = `${v.scored} ok  ${v.failed} failed`;
  const delta = p.estimate?.all.delta ? `  ${deltaText(p.estimate)}` : '';
  const stopped = p.stoppedEarly ? `  ${stoppingText(p.stoppedEarly, p.running?.length ?? 0)}` : '';
  return `[${bar}] ${v.settled}/${v.keys} rollouts  ${counts}  ${rate.toFixed(1)} rows/s  ETA ${eta === null ? '?' : duration(eta)}${delta}${round}${attempts}${limit}${requests}${paused}${stopped}${outage}`;
}
