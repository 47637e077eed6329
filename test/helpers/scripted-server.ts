/**
 * A scripted NeMo Gym resources server on a real `node:http` server, for end-to-end tests of what
 * `reverify run` sends and how it handles each reply. It records every request body it receives on
 * `/verify`, `/aggregate_metrics` and `/reverify_mode` (in arrival order), counts `/verify` requests
 * in flight, and lets the test script the reply per row.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Row = Record<string, unknown>;

/** One reply: HTTP status and a body (a value sent as JSON, or `raw` text sent verbatim), after an optional delay. */
export interface Reply {
  status?: number;
  body?: unknown;
  /** Sent as is instead of `JSON.stringify(body)` (e.g. to keep `1.0`). */
  raw?: string;
  delayMs?: number;
  headers?: Record<string, string>;
  /** Reset the connection (after `delayMs`) instead of answering. */
  reset?: boolean;
}

/** A `/verify` script: the reply for a parsed request body; `attempt` counts earlier requests for the same key (0 first). */
export type VerifyScript = (row: Row, attempt: number) => Reply | Promise<Reply>;

export interface ScriptedServerOptions {
  /** Answer of `GET /reverify_mode` (default `stateless`), or the whole reply (any status, e.g. `raw` text), or a script of it. */
  mode?: 'stateless' | 'unknown' | 'unsupported' | Reply | (() => Reply | Promise<Reply>);
  /** `/verify` replies (default: `{"reward": 1.0}` for every row). */
  verify?: VerifyScript;
  /** `/aggregate_metrics` replies (default: `key_metrics` with the mean reward and the row count). */
  aggregate?: (body: { verify_responses: Row[] }) => Reply;
  /** Answer 411 to a POST whose body is chunked or has no `Content-Length` (as some servers and proxies do). */
  requireContentLength?: boolean;
}

/** A request the server received. */
export interface Received {
  method: string;
  url: string;
  /** The raw body text. */
  text: string;
  /** The parsed body (`undefined` for an empty body). */
  body: unknown;
  /** The request headers (lower-case names). */
  headers: IncomingHttpHeaders;
}

export interface ScriptedServer {
  url: string;
  port: number;
  /** `--server` value naming this server. */
  flag(name: string): string;
  /** Every request received, in arrival order. */
  requests: Received[];
  /** Parsed `/verify` bodies, in arrival order. */
  readonly verifyBodies: Row[];
  /** Parsed `/aggregate_metrics` bodies, in arrival order. */
  readonly aggregateBodies: Array<{ verify_responses: Row[] }>;
  /** Number of `GET /reverify_mode` requests. */
  readonly modeRequests: number;
  /** `/verify` requests in flight now, and the most there ever were. */
  readonly inFlight: number;
  readonly peakInFlight: number;
  /** Forgets every recorded request and the peak (the per-key attempt counts of the scripts are kept). */
  reset(): void;
  /** Stops listening and drops every connection: the server is down (connection refused) until `restart`. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** `task:rollout` of a row. */
export function keyText(row: Row): string {
  return `${row._ng_task_index}:${row._ng_rollout_index}`;
}

/** A 200 reply whose body is the given reward (and any other fields). */
export function reward(value: number, extra: Row = {}): Reply {
  return { status: 200, body: { reward: value, ...extra } };
}

/** A 200 judge-failure reply, as the NeMo Gym judge failsafe writes it. */
/** A `/reverify_mode` script whose first `n` answers wait until `n` requests have come. */
export function heldUntil(n: number): () => Promise<Reply> {
  let asked = 0;
  let release = () => {};
  const all = new Promise<void>((r) => (release = r));
  return async () => {
    if (++asked >= n) release();
    await all;
    return { status: 200, body: 'stateless' };
  };
}

export function judgeFailed(error = 'JudgeError: x'): Reply {
  return { status: 200, raw: `{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_judge_error":${JSON.stringify(error)}}` };
}

/** A 200 reply echoing the request's `responses_create_params` and `response` (what a real RS returns), plus `fields`. */
export function echo(row: Row, fields: Row): Reply {
  return { status: 200, body: { responses_create_params: row.responses_create_params, response: row.response, ...fields } };
}

/** An `/aggregate_metrics` reply with empty metrics, for tests that do not look at them. */
export function emptyMetrics(): Reply {
  return { status: 200, body: { agent_metrics: {}, key_metrics: {}, group_level_metrics: [] } };
}

/** A script from a table keyed by task index; rows not in the table get `fallback`. */
export function byTask(table: Record<number, Reply | ((row: Row, attempt: number) => Reply)>, fallback: Reply = reward(1.0)): VerifyScript {
  return (row, attempt) => {
    const entry = table[row._ng_task_index as number];
    if (entry === undefined) return fallback;
    return typeof entry === 'function' ? entry(row, attempt) : entry;
  };
}

function defaultAggregate(body: { verify_responses: Row[] }): Reply {
  const rows = body.verify_responses;
  const rewards = rows.map((r) => r.reward).filter((r): r is number => typeof r === 'number');
  const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0;
  return {
    status: 200,
    body: { agent_metrics: { 'mean/reward': mean, rows: rows.length }, key_metrics: { 'mean/reward': mean }, group_level_metrics: [] },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function send(res: ServerResponse, reply: Reply): Promise<void> {
  if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
  if (res.destroyed) return;
  if (reply.reset) {
    res.socket?.resetAndDestroy();
    return;
  }
  res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
  res.end(reply.raw ?? JSON.stringify(reply.body ?? null));
}

/** Starts a scripted resources server on a free port of 127.0.0.1. */
export async function startScriptedServer(opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const mode = opts.mode ?? 'stateless';
  const verify: VerifyScript = opts.verify ?? (() => reward(1.0));
  const aggregate = opts.aggregate ?? defaultAggregate;
  const requests: Received[] = [];
  const attempts = new Map<string, number>();
  let inFlight = 0;
  let peak = 0;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '').replace(/^\/ng-rollout\/[^/]+/, '');
      requests.push({ method: req.method ?? '', url: path, text, body, headers: req.headers });
      const unsized = req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] === undefined;
      if (opts.requireContentLength && req.method === 'POST' && unsized) return send(res, { status: 411, body: 'Length Required' });
      if (req.method === 'GET' && path === '/reverify_mode')
        return send(res, typeof mode === 'string' ? { status: 200, body: mode } : typeof mode === 'function' ? await mode() : mode);
      if (req.method === 'GET' && path === '/') return send(res, { status: 200, body: { status: 'ok' } });
      if (req.method === 'POST' && path === '/aggregate_metrics') return send(res, aggregate(body as { verify_responses: Row[] }));
      if (req.method === 'POST' && path === '/verify') {
        const row = body as Row;
        const key = keyText(row);
        const attempt = attempts.get(key) ?? 0;
        attempts.set(key, attempt + 1);
        inFlight++;
        peak = Math.max(peak, inFlight);
        try {
          await send(res, await verify(row, attempt));
        } finally {
          inFlight--;
        }
        return;
      }
      return send(res, { status: 404, body: { detail: 'Not Found' } });
    })().catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(String(err)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const of = (method: string, path: string) => requests.filter((r) => r.method === method && r.url === path);
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url,
    port,
    flag: (name) => `${name}=${url}`,
    requests,
    get verifyBodies() {
      return of('POST', '/verify').map((r) => r.body as Row);
    },
    get aggregateBodies() {
      return of('POST', '/aggregate_metrics').map((r) => r.body as { verify_responses: Row[] });
    },
    get modeRequests() {
      return of('GET', '/reverify_mode').length;
    },
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peak;
    },
    reset() {
      requests.length = 0;
      peak = inFlight;
    },
    stop,
    restart: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
