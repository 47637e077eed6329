import type { Progress } from '../contract/run-spec.js';

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

/** Rows finished, whatever their outcome. */
export function rowsFinished(p: Progress): number {
  return p.done + p.failed + p.dropped;
}

/** `[######......]  120/400 rows  117 ok  3 failed  45.2 rows/s  ETA 6s` */
export function progressLine(p: Progress, rate: number, width = 24): string {
  const finished = rowsFinished(p);
  if (p.phase === 'rejudge-wait') return `waiting to re-judge (round ${p.round + 2})…`;
  if (p.phase !== 'verify') return `${p.phase}…`;
  const frac = p.planned > 0 ? Math.min(1, finished / p.planned) : 1;
  const fill = Math.round(frac * width);
  const bar = '#'.repeat(fill) + '.'.repeat(width - fill);
  const eta = rate > 0 ? duration((p.planned - finished) / rate) : '?';
  const limit = p.effectiveConcurrency < p.concurrency ? `  concurrency ${p.effectiveConcurrency}/${p.concurrency}` : '';
  const round = p.round > 0 ? `  round ${p.round + 1}` : '';
  const paused = p.paused ? '  PAUSED' : '';
  return `[${bar}] ${finished}/${p.planned} rows  ${p.done} ok  ${p.failed} failed  ${rate.toFixed(1)} rows/s  ETA ${eta}${round}${limit}${paused}`;
}
