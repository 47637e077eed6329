import type { ReverifyMode } from '../contract/reverify-mode.js';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { ConfigError } from '../contract/errors.js';
import type { AggregateReplyFile } from '../aggregation/aggregate-reply.js';
import { describeTransportError, isUsageError } from './transport-errors.js';
import { classifyVerifyReply, type VerifyReply } from './verify-reply.js';
import { AggregateMetricsError } from './errors.js';
import { DeadlineExceeded, Deadlines } from './deadlines.js';
import { dispatchWhole } from './whole-reply.js';
import { checkedAggregateReply, modeProbeNames, reverifyModeOf, unanswered } from './probe-replies.js';
import { redactUserinfo } from '../contract/secrets.js';
import { authorizationFor } from './credentials.js';

export type { ReverifyMode } from '../contract/reverify-mode.js';
export { classifyVerifyReply, settleReply, type SettledReply, type VerifyReply } from './verify-reply.js';
export { describeTransportError } from './transport-errors.js';

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

/**
 * HTTP client for NeMo Gym resources servers: `/verify`, `/reverify_mode`, `/aggregate_metrics`.
 * Keeps one keep-alive undici `Pool` per server origin (pipelining 1). Share one instance per
 * process (e.g. pass it to `createActivities`) and `close()` it at shutdown.
 */
export class VerifierClient {
  private readonly pools = new Map<string, Pool>();
  private readonly targets = new Map<string, { pool: Pool; path: string; origin: string }>();
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
    this.aggregateTimeoutMs = positiveInt('aggregateTimeoutMs', options.aggregateTimeoutMs ?? DEFAULT_AGGREGATE_TIMEOUT_MS);
    this.keepAliveTimeoutMs = positiveInt('keepAliveTimeoutMs', options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
  }

  /**
   * One `POST <serverUrl>/verify`, no retries (see `verifyWithRetries`). Never throws for server or
   * network trouble: that is a `retryable` reply. Throws only when `signal` aborts (its reason),
   * for an invalid URL (ConfigError) or after `close()`.
   */
  async verifyOnce(serverUrl: string, body: string | Buffer, signal?: AbortSignal): Promise<VerifyReply> {
    const { pool, path, authorization } = this.target(serverUrl, 'verify');
    const timeoutMs = this.requestTimeoutMs;
    try {
      const reply = await this.deadlines.run(timeoutMs, signal, (s) =>
        dispatchWhole(
          pool,
          { method: 'POST', path, headers: headers(JSON_CONTENT, authorization), body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
          s,
        ),
      );
      return classifyVerifyReply(reply.status, reply.retryAfter, reply.body);
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
    const { who, fix } = modeProbeNames(serverName, serverUrl);
    const { pool, path, authorization } = this.target(serverUrl, 'reverify_mode', serverName);
    let status: number;
    let text: string;
    try {
      ({ status, text } = await this.deadlines.run(this.probeTimeoutMs, undefined, async (s) => {
        const res = await pool.request({
          method: 'GET',
          path,
          headers: headers({}, authorization),
          signal: s,
          headersTimeout: this.probeTimeoutMs,
          bodyTimeout: this.probeTimeoutMs,
        });
        return { status: res.statusCode, text: await res.body.text() };
      }));
    } catch (err) {
      throw unanswered(err, who, fix);
    }
    return reverifyModeOf(status, text, who, fix);
  }

  /**
   * `POST <serverUrl>/aggregate_metrics` (contract §2.3) with the body file `bodyPath`, sent from
   * disk with its `Content-Length` (never chunked); the reply is written to `replyPath` (it holds
   * one entry per task: too large to hold in memory at 10^6 rows) and checked
   * (`readAggregateReply`). Every failure but reading the body file is an AggregateMetricsError
   * naming the server (with the HTTP status when it answered); a read error of the body file is
   * rethrown unchanged, and so is `signal`'s reason when it aborts. `timeoutMs` (default: the
   * client's `aggregateTimeoutMs`) bounds the whole request; past it the error is `timedOut`.
   */
  async aggregateMetrics(
    serverName: string,
    serverUrl: string,
    bodyPath: string,
    replyPath: string,
    signal?: AbortSignal,
    timeoutMs = this.aggregateTimeoutMs,
  ): Promise<AggregateReplyFile> {
    const { pool, path, authorization } = this.target(serverUrl, 'aggregate_metrics', serverName);
    const length = (await stat(bodyPath)).size;
    const body = createReadStream(bodyPath);
    let readError: Error | undefined;
    body.once('error', (err) => (readError = err));
    let status: number;
    try {
      status = await this.deadlines.run(timeoutMs, signal, async (s) => {
        const res = await pool.request({
          method: 'POST',
          path,
          headers: headers({ ...JSON_CONTENT, 'content-length': String(length) }, authorization),
          body,
          signal: s,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        await pipeline(res.body, createWriteStream(replyPath));
        return res.statusCode;
      });
    } catch (err) {
      if (readError !== undefined) throw readError;
      if (signal?.aborted) throw signal.reason;
      if (isUsageError(err)) throw err;
      if (err instanceof DeadlineExceeded) throw new AggregateMetricsError(serverName, serverUrl, err.message, undefined, true);
      throw new AggregateMetricsError(serverName, serverUrl, describeTransportError(err));
    } finally {
      body.destroy();
    }
    return checkedAggregateReply(serverName, serverUrl, replyPath, status);
  }

  /**
   * True when the server answers `GET <serverUrl>/` (NeMo Gym's liveness route) within the probe
   * timeout with any status below 500: it is up, whatever it answered elsewhere. False for no
   * answer, a timeout or a 5xx (down, or a proxy in front of a server that is down).
   */
  async answers(serverUrl: string, signal?: AbortSignal): Promise<boolean> {
    const { pool, path, authorization } = this.target(serverUrl, '');
    try {
      return await this.deadlines.run(this.probeTimeoutMs, signal, async (s) => {
        const res = await pool.request({ method: 'GET', path, headers: headers({}, authorization), signal: s });
        await res.body.dump();
        return res.statusCode < 500;
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (isUsageError(err)) throw err;
      return false;
    }
  }

  /** Close every pool gracefully (in-flight requests finish). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    this.targets.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }

  /** The pool of the server's origin, the route's path, and the server's credentials if any (`credentials.ts`). */
  private target(serverUrl: string, route: string, serverName?: string): { pool: Pool; path: string; authorization: string | undefined } {
    if (this.closed) throw new Error('VerifierClient is closed');
    // Parsed once per URL and route (a URL and a Map lookup per /verify add up at thousands per second).
    const key = `${route} ${serverUrl}`;
    let t = this.targets.get(key);
    if (t === undefined) {
      t = this.parseTarget(serverUrl, route, serverName);
      this.targets.set(key, t);
    }
    return { pool: t.pool, path: t.path, authorization: authorizationFor(t.origin) };
  }

  private parseTarget(serverUrl: string, route: string, serverName?: string): { pool: Pool; path: string; origin: string } {
    let url: URL | undefined;
    try {
      url = new URL(serverUrl);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      const who = serverName !== undefined ? `resources server '${serverName}'` : 'resources server';
      throw new ConfigError(
        `${who} has an invalid URL '${redactUserinfo(serverUrl)}': expected http://host:port` +
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
    return { pool, path, origin: url.origin };
  }
}

const JSON_CONTENT = { 'content-type': 'application/json' } as const;

/** Request headers: `base`, plus HTTP Basic `authorization` when the server has credentials. */
function headers(base: Record<string, string>, authorization: string | undefined): Record<string, string> {
  return authorization === undefined ? base : { ...base, authorization };
}

function positiveInt(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`VerifierClient: ${name} must be a positive number, got ${value}`);
  }
  return Math.ceil(value);
}
