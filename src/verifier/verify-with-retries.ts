import type { VerifierClient, VerifyReply } from './client.js';
import { VerifierUnavailableError } from './errors.js';
import { backoffDelayMs } from './retry-policy.js';
import type { ThrottleGate } from './throttle-gate.js';

/** What `onRetry` is told before each wait. */
export interface VerifyRetryInfo {
  serverUrl: string;
  /** The try that just failed, 1-based. */
  attempt: number;
  maxTries: number;
  /** How long we wait before the next try. */
  delayMs: number;
  reason: string;
  status?: number;
  retryAfterMs?: number;
}

export interface VerifyRetryOptions {
  /** Total tries including the first (≥ 1). */
  maxTries: number;
  baseMs: number;
  maxMs: number;
  /** Cap for a server's Retry-After (see backoffDelayMs). */
  retryAfterCapMs?: number;
  /** Aborting stops a request in flight or a wait at once; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  onRetry?: (info: VerifyRetryInfo) => void;
  random?: () => number;
  /**
   * The process's gate (throttle-gate.ts): the first try waits until no request to this server
   * waits out a 429's Retry-After, and a 429's wait holds new rows back until the retry is sent.
   */
  gate?: ThrottleGate;
  /** Told the ms this row spent held back by throttling: at the gate, and waiting out 429/503s. */
  onThrottleWait?: (ms: number) => void;
  /** Only used to name the server in VerifierUnavailableError. */
  serverName?: string;
}

/**
 * `POST /verify` with retries of `retryable` replies (transport errors, timeouts, 408, 429, 5xx)
 * and backoff with jitter, honouring Retry-After. Returns the final `ok` or `rejected` reply.
 * When all `maxTries` tries were retryable, throws VerifierUnavailableError: let it fail the
 * activity attempt, so that Temporal retries the activity later with its own (longer) backoff.
 */
export async function verifyWithRetries(
  client: Pick<VerifierClient, 'verifyOnce'>,
  serverUrl: string,
  body: string | Buffer,
  opts: VerifyRetryOptions,
): Promise<Exclude<VerifyReply, { kind: 'retryable' }>> {
  const maxTries = Math.max(1, Math.floor(opts.maxTries));
  const random = opts.random ?? Math.random;
  let last: Extract<VerifyReply, { kind: 'retryable' }> | undefined;
  if (opts.gate) await timed(opts.gate.clear(serverUrl, opts.signal), opts.onThrottleWait);
  // A 429 holds this server's new rows back (at the gate) until this row is sent again.
  let holding = false;
  try {
    for (let attempt = 1; attempt <= maxTries; attempt++) {
      if (holding) opts.gate?.release(serverUrl);
      holding = false;
      const reply = await client.verifyOnce(serverUrl, body, opts.signal);
      if (reply.kind !== 'retryable') return reply;
      last = reply;
      if (attempt === maxTries) break;
      const delayMs = retryDelay(attempt, reply, opts, random);
      opts.onRetry?.({
        serverUrl,
        attempt,
        maxTries,
        delayMs,
        reason: reply.reason,
        ...(reply.status !== undefined ? { status: reply.status } : {}),
        ...(reply.retryAfterMs !== undefined ? { retryAfterMs: reply.retryAfterMs } : {}),
      });
      if (reply.status !== 429 && reply.status !== 503) {
        await sleep(delayMs, opts.signal);
        continue;
      }
      holding = reply.status === 429 && opts.gate !== undefined;
      if (holding) opts.gate?.hold(serverUrl);
      await timed(sleep(delayMs, opts.signal), opts.onThrottleWait);
    }
  } finally {
    if (holding) opts.gate?.release(serverUrl);
  }
  throw new VerifierUnavailableError({
    serverUrl,
    ...(opts.serverName !== undefined ? { serverName: opts.serverName } : {}),
    tries: maxTries,
    lastReason: last?.reason ?? 'unknown',
    ...(last?.status !== undefined ? { lastStatus: last.status } : {}),
    ...(last?.excerpt !== undefined ? { lastExcerpt: last.excerpt } : {}),
  });
}

/** The wait before the try after `attempt`: backoff with jitter, at least the reply's Retry-After. */
function retryDelay(attempt: number, reply: { retryAfterMs?: number }, opts: VerifyRetryOptions, random: () => number): number {
  return backoffDelayMs(
    attempt,
    {
      baseMs: opts.baseMs,
      maxMs: opts.maxMs,
      ...(reply.retryAfterMs !== undefined ? { retryAfterMs: reply.retryAfterMs } : {}),
      ...(opts.retryAfterCapMs !== undefined ? { retryAfterCapMs: opts.retryAfterCapMs } : {}),
    },
    random,
  );
}

/** Awaits `waiting`, then tells `onMs` how long it took. */
async function timed(waiting: Promise<void>, onMs: ((ms: number) => void) | undefined): Promise<void> {
  const started = performance.now();
  await waiting;
  onMs?.(performance.now() - started);
}

/** setTimeout as a promise that rejects with `signal.reason` as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  // `signal.reason` is the AbortError (or the reason the caller gave): rethrown as it is.
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
