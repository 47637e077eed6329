import { Readable } from 'node:stream';
import { Pool } from 'undici';
import { z } from 'zod';
import { ConfigError } from '../contract/errors.js';
import { AggregateMetricsError } from './errors.js';
import { bodyExcerpt, truncateOneLine } from './excerpt.js';
import { parseRetryAfterMs } from './retry-after.js';
import { DeadlineExceeded, Deadlines, formatMs } from './deadlines.js';

/**
 * The outcome of one `POST /verify`.
 *
 * - `ok`: a 2xx whose body is a JSON object. `body` is the text exactly as received (callers must
 *   not re-serialize it: large integers would be rounded).
 * - `rejected`: the server answered and retrying the same request will not help: a 4xx other than
 *   408/429, a 3xx, or a 2xx whose body is NOT a JSON object (a contract violation by the server:
 *   the request is deterministic, so repeating it is not expected to fix it; the excerpt starts
 *   with `reply is not a JSON object:`). `excerpt` is one line, at most 300 characters.
 * - `retryable`: transport errors (refused, reset, socket closed, DNS), the request timeout,
 *   408, 429 and 5xx. `retryAfterMs` comes from a `Retry-After` header (seconds or HTTP-date).
 */
export type VerifyReply =
  | { kind: 'ok'; status: number; body: string; /** `body` parsed (a JSON object), so callers need not parse it again. */ result: Record<string, unknown> }
  | { kind: 'rejected'; status: number; excerpt: string }
  | { kind: 'retryable'; reason: string; status?: number; retryAfterMs?: number };

export type ReverifyMode = 'stateless' | 'unsupported' | 'unknown';

export interface AggregateMetricsReply {
  group_level_metrics: unknown[];
  agent_metrics: Record<string, unknown>;
  key_metrics: Record<string, unknown>;
}

export interface VerifierClientOptions {
  /**
   * Keep-alive connections per resources server origin. Set it to at least the number of
   * concurrent `/verify` calls per server: requests beyond it wait in the pool's queue, and that
   * wait counts against `requestTimeoutMs`.
   */
  connectionsPerServer: number;
  /** Deadline for one whole `/verify` request (connect, send, headers and body). */
  requestTimeoutMs: number;
  /** Deadline for `GET /reverify_mode`. Default 30 s. */
  probeTimeoutMs?: number;
  /** Deadline for one whole `POST /aggregate_metrics` (upload + compute + reply). Default 2 h. */
  aggregateTimeoutMs?: number;
  /**
   * How long an idle connection is kept. Default 4 s: below the 5 s idle timeout of uvicorn
   * (NeMo Gym servers) and Node's http server, so the client never reuses a socket the server is
   * about to close. undici lowers it further if the server sends a `Keep-Alive: timeout=` hint.
   */
  keepAliveTimeoutMs?: number;
}

const DEFAULT_PROBE_TIMEOUT_MS = 30_000;
const DEFAULT_AGGREGATE_TIMEOUT_MS = 2 * 60 * 60_000;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;

const REVERIFY_MODES: readonly ReverifyMode[] = ['stateless', 'unsupported', 'unknown'];

const AggregateReplySchema = z.object({
  group_level_metrics: z.array(z.unknown()).nullish(),
  agent_metrics: z.record(z.string(), z.unknown()).nullish(),
  key_metrics: z.record(z.string(), z.unknown()).nullish(),
});


/**
 * HTTP client for NeMo Gym resources servers: `/verify`, `/reverify_mode`, `/aggregate_metrics`.
 * Keeps one keep-alive undici `Pool` per server origin (pipelining 1). Share one instance per
 * process (e.g. pass it to `createActivities`) and `close()` it at shutdown.
 */
export class VerifierClient {
  private readonly pools = new Map<string, Pool>();
  private readonly connectionsPerServer: number;
  private readonly requestTimeoutMs: number;
  private readonly probeTimeoutMs: number;
  private readonly aggregateTimeoutMs: number;
  private readonly keepAliveTimeoutMs: number;
  private closed = false;
  private readonly deadlines = new Deadlines();

  constructor(options: VerifierClientOptions) {
    this.connectionsPerServer = positiveInt('connectionsPerServer', options.connectionsPerServer);
    this.requestTimeoutMs = positiveInt('requestTimeoutMs', options.requestTimeoutMs);
    this.probeTimeoutMs = positiveInt('probeTimeoutMs', options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
    this.aggregateTimeoutMs = positiveInt(
      'aggregateTimeoutMs',
      options.aggregateTimeoutMs ?? DEFAULT_AGGREGATE_TIMEOUT_MS,
    );
    this.keepAliveTimeoutMs = positiveInt(
      'keepAliveTimeoutMs',
      options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    );
  }

  /**
   * One `POST <serverUrl>/verify`, no retries (see `verifyWithRetries`). Never throws for server or
   * network trouble: that is a `retryable` reply. Throws only when `signal` aborts (its reason),
   * for an invalid URL (ConfigError) or after `close()`.
   */
  async verifyOnce(serverUrl: string, body: string, signal?: AbortSignal): Promise<VerifyReply> {
    const { pool, path } = this.target(serverUrl, 'verify');
    const timeoutMs = this.requestTimeoutMs;
    try {
      return await this.deadlines.run(timeoutMs, signal, async (s) => {
        const res = await pool.request({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json' },
          body,
          signal: s,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const text = await res.body.text();
        return classifyVerifyReply(res.statusCode, res.headers['retry-after'], text);
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof DeadlineExceeded) return { kind: 'retryable', reason: err.message };
      if (isUsageError(err)) throw err;
      return { kind: 'retryable', reason: describeTransportError(err) };
    }
  }

  /**
   * `GET <serverUrl>/reverify_mode` (contract §2.1). Every failure is a one-line ConfigError that
   * names the server, its URL and what to do.
   */
  async reverifyMode(serverName: string, serverUrl: string): Promise<ReverifyMode> {
    const who = `resources server '${serverName}' at ${serverUrl}`;
    const fix = `fix its host/port in the config or pass --server ${serverName}=URL`;
    const { pool, path } = this.target(serverUrl, 'reverify_mode', serverName);
    let status: number;
    let text: string;
    try {
      ({ status, text } = await this.deadlines.run(this.probeTimeoutMs, undefined, async (s) => {
        const res = await pool.request({
          method: 'GET',
          path,
          signal: s,
          headersTimeout: this.probeTimeoutMs,
          bodyTimeout: this.probeTimeoutMs,
        });
        return { status: res.statusCode, text: await res.body.text() };
      }));
    } catch (err) {
      if (err instanceof DeadlineExceeded) {
        throw new ConfigError(
          `${who} did not answer GET /reverify_mode within ${formatMs(err.timeoutMs)}: check that it is running and not overloaded, or ${fix}`,
        );
      }
      if (isUsageError(err)) throw err;
      throw new ConfigError(
        `${who} is not reachable (${describeTransportError(err)}): start it, or ${fix}`,
      );
    }
    if (status === 404) {
      throw new ConfigError(
        `${who} has no GET /reverify_mode route (HTTP 404): is it a NeMo Gym resources server? Check the URL, or ${fix}`,
      );
    }
    if (status < 200 || status > 299) {
      throw new ConfigError(
        `${who} answered GET /reverify_mode with HTTP ${status}: ${bodyExcerpt(text)}; fix the server (see its log) and try again`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (typeof value === 'string' && (REVERIFY_MODES as readonly string[]).includes(value)) {
      return value as ReverifyMode;
    }
    const shown = typeof value === 'string' ? JSON.stringify(value) : truncateOneLine(text, 120) || '(empty body)';
    throw new ConfigError(
      `${who} answered GET /reverify_mode with ${shown}, expected one of "stateless", "unsupported", "unknown": update the resources server to a NeMo Gym version with reverify support`,
    );
  }

  /**
   * `POST <serverUrl>/aggregate_metrics` (contract §2.3). `body` yields the complete JSON request
   * body (`{"verify_responses":[...]}`) chunk by chunk; it is streamed to the server with chunked
   * transfer encoding and never assembled in memory. Missing reply fields default to empty.
   * Failures throw {@link AggregateMetricsError} naming the server; an error thrown by `body`
   * itself is rethrown unchanged. The body is consumed once, so the caller retries by calling again
   * with a fresh iterable.
   */
  async aggregateMetrics(
    serverName: string,
    serverUrl: string,
    body: AsyncIterable<string | Uint8Array>,
    signal?: AbortSignal,
  ): Promise<AggregateMetricsReply> {
    const { pool, path } = this.target(serverUrl, 'aggregate_metrics', serverName);
    const timeoutMs = this.aggregateTimeoutMs;
    const source: { error?: unknown; failed: boolean } = { failed: false };
    const stream = Readable.from(asBuffers(body, source), { objectMode: false });
    let status: number;
    let text: string;
    try {
      ({ status, text } = await this.deadlines.run(timeoutMs, signal, async (s) => {
        const res = await pool.request({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json' },
          body: stream,
          signal: s,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        return { status: res.statusCode, text: await res.body.text() };
      }));
    } catch (err) {
      stream.destroy();
      if (source.failed) throw source.error;
      if (signal?.aborted) throw signal.reason;
      if (isUsageError(err)) throw err;
      const detail = err instanceof DeadlineExceeded ? err.message : describeTransportError(err);
      throw new AggregateMetricsError(serverName, serverUrl, detail);
    }
    if (status < 200 || status > 299) {
      throw new AggregateMetricsError(serverName, serverUrl, `HTTP ${status}: ${bodyExcerpt(text)}`, status);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AggregateMetricsError(
        serverName,
        serverUrl,
        `reply is not JSON: ${bodyExcerpt(text)}`,
        status,
      );
    }
    const parsed = AggregateReplySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape';
      throw new AggregateMetricsError(serverName, serverUrl, `unexpected reply (${where})`, status);
    }
    return {
      group_level_metrics: parsed.data.group_level_metrics ?? [],
      agent_metrics: parsed.data.agent_metrics ?? {},
      key_metrics: parsed.data.key_metrics ?? {},
    };
  }

  /** Close every pool gracefully (in-flight requests finish). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }

  private target(serverUrl: string, route: string, serverName?: string): { pool: Pool; path: string } {
    if (this.closed) throw new Error('VerifierClient is closed');
    let url: URL | undefined;
    try {
      url = new URL(serverUrl);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      const who = serverName !== undefined ? `resources server '${serverName}'` : 'resources server';
      throw new ConfigError(
        `${who} has an invalid URL '${serverUrl}': expected http://host:port` +
          (serverName !== undefined ? `; fix the config or pass --server ${serverName}=URL` : ''),
      );
    }
    const base = url.pathname.replace(/\/+$/, '');
    const path = `${base}/${route}${url.search}`;
    let pool = this.pools.get(url.origin);
    if (pool === undefined) {
      pool = new Pool(url.origin, {
        connections: this.connectionsPerServer,
        pipelining: 1,
        keepAliveTimeout: this.keepAliveTimeoutMs,
        keepAliveMaxTimeout: Math.max(this.keepAliveTimeoutMs, 10 * 60_000),
        headersTimeout: this.requestTimeoutMs,
        bodyTimeout: this.requestTimeoutMs,
      });
      this.pools.set(url.origin, pool);
    }
    return { pool, path };
  }
}

/** Classify a complete `/verify` reply. Exported for unit tests. */
export function classifyVerifyReply(
  status: number,
  retryAfter: string | string[] | undefined,
  text: string,
): VerifyReply {
  if (status >= 200 && status <= 299) {
    const result = parseJsonObject(text);
    if (result) return { kind: 'ok', status, body: text, result };
    return {
      kind: 'rejected',
      status,
      excerpt: truncateOneLine(`reply is not a JSON object: ${bodyExcerpt(text)}`),
    };
  }
  if (status === 408 || status === 429 || status >= 500) {
    const reply: VerifyReply = { kind: 'retryable', reason: `HTTP ${status}: ${bodyExcerpt(text)}`, status };
    const retryAfterMs = parseRetryAfterMs(retryAfter);
    if (retryAfterMs !== undefined) reply.retryAfterMs = retryAfterMs;
    return reply;
  }
  return { kind: 'rejected', status, excerpt: bodyExcerpt(text) };
}

/** The body as a JSON object, or null if it is not exactly one. */
function parseJsonObject(text: string): Record<string, unknown> | null {
  // Cheap shape check first; then a full parse to be sure the body is one valid JSON object.
  const start = text.search(/\S/);
  if (start < 0 || text[start] !== '{') return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}


async function* asBuffers(
  body: AsyncIterable<string | Uint8Array>,
  source: { error?: unknown; failed: boolean },
): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) {
      if (typeof chunk === 'string') {
        if (chunk.length > 0) yield Buffer.from(chunk, 'utf8');
      } else if (chunk.byteLength > 0) {
        yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      }
    }
  } catch (err) {
    source.failed = true;
    source.error = err;
    throw err;
  }
}

/** Errors that mean a bug or a closed client, not a server problem: never turned into a retry. */
function isUsageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    err instanceof ConfigError ||
    code === 'UND_ERR_INVALID_ARG' ||
    code === 'UND_ERR_INVALID_RETURN_VALUE' ||
    code === 'UND_ERR_DESTROYED' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'UND_ERR_NOT_SUPPORTED'
  );
}

/** A short description of a transport error, e.g. `connect ECONNREFUSED` or `other side closed (UND_ERR_SOCKET)`. */
export function describeTransportError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describeTransportError(err.errors[0]);
  if (err === null || typeof err !== 'object') return truncateOneLine(String(err), 200);
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown; hostname?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const syscall = typeof e.syscall === 'string' ? e.syscall : undefined;
  if (syscall !== undefined && code !== undefined) {
    const host = syscall === 'getaddrinfo' && typeof e.hostname === 'string' ? ` ${e.hostname}` : '';
    return `${syscall} ${code}${host}`;
  }
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : undefined;
  if (message !== undefined && code !== undefined && !message.includes(code)) {
    return truncateOneLine(`${message} (${code})`, 200);
  }
  return truncateOneLine(message ?? code ?? String(err), 200);
}

function positiveInt(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`VerifierClient: ${name} must be a positive number, got ${value}`);
  }
  return Math.ceil(value);
}

