import type { VerifierClient, VerifyReply } from './client.js';
import { VerifierUnavailableError } from './errors.js';
import { backoffDelayMs } from './retry-policy.js';

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
  for (let attempt = 1; attempt <= maxTries; attempt++) {
    const reply = await client.verifyOnce(serverUrl, body, opts.signal);
    if (reply.kind !== 'retryable') return reply;
    last = reply;
    if (attempt === maxTries) break;
    const delayMs = backoffDelayMs(
      attempt,
      {
        baseMs: opts.baseMs,
        maxMs: opts.maxMs,
        ...(reply.retryAfterMs !== undefined ? { retryAfterMs: reply.retryAfterMs } : {}),
        ...(opts.retryAfterCapMs !== undefined ? { retryAfterCapMs: opts.retryAfterCapMs } : {}),
      },
      random,
    );
    opts.onRetry?.({
      serverUrl,
      attempt,
      maxTries,
      delayMs,
      reason: reply.reason,
      ...(reply.status !== undefined ? { status: reply.status } : {}),
      ...(reply.retryAfterMs !== undefined ? { retryAfterMs: reply.retryAfterMs } : {}),
    });
    await sleep(delayMs, opts.signal);
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
