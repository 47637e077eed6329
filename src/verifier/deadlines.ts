/**
 * Whole-request deadlines for many concurrent HTTP requests, kept by ONE timer. A per-request
 * `setTimeout` + `AbortController` (+ a listener on the caller's signal) cost a measurable share
 * of the worker's CPU per `/verify` at thousands of rows per second; here each request gets a
 * plain EventEmitter as its undici `signal`, and a sweep every `SWEEP_MS` (only while requests are
 * in flight) aborts those past their deadline or whose caller's signal aborted. A deadline fires
 * at most `SWEEP_MS` late.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';

const SWEEP_MS = 50;

/** Raised by {@link Deadlines.run} when the request's own deadline fired. */
export class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no complete reply within ${formatMs(timeoutMs)} (request timeout)`);
  }
}

/** What undici accepts as a request's `signal`: an EventEmitter with `aborted`, `reason` and an 'abort' event. */
export class RequestSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

interface InFlight {
  deadline: number;
  timeoutMs: number;
  outer: AbortSignal | undefined;
  signal: RequestSignal;
  timedOut: boolean;
}

export class Deadlines {
  private readonly live = new Set<InFlight>();
  private timer: NodeJS.Timeout | null = null;

  /**
   * Runs `fn` with a signal that aborts after `timeoutMs` or when `outer` aborts. Our own deadline
   * surfaces as `DeadlineExceeded`; an outer abort as whatever `fn` threw.
   */
  async run<T>(timeoutMs: number, outer: AbortSignal | undefined, fn: (signal: RequestSignal) => Promise<T>): Promise<T> {
    outer?.throwIfAborted();
    const entry: InFlight = { deadline: performance.now() + timeoutMs, timeoutMs, outer, signal: new RequestSignal(), timedOut: false };
    this.live.add(entry);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    try {
      return await fn(entry.signal);
    } catch (err) {
      if (entry.timedOut && !outer?.aborted) throw new DeadlineExceeded(timeoutMs);
      throw err;
    } finally {
      this.live.delete(entry);
      if (this.live.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    }
  }

  private sweep(): void {
    const now = performance.now();
    for (const e of this.live) {
      if (e.signal.aborted) continue;
      if (e.outer?.aborted) {
        e.signal.abort(e.outer.reason);
      } else if (now >= e.deadline) {
        e.timedOut = true;
        e.signal.abort(new DeadlineExceeded(e.timeoutMs));
      }
    }
  }
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s} s` : `${s.toFixed(1)} s`;
}
