import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleAggregateMetrics } from './aggregate-route.js';
import { AggregationError } from './aggregate.js';
import { pythonExceptionBody, sendJson, sendJsonText } from './http-util.js';
import { type ReferenceServerOptions, referenceServerOptionsSchema } from './options.js';
import { type ServerStats, StatsRecorder } from './server-stats.js';
import { RequestValidationError } from './validation.js';
import { createVerifyHandler } from './verify-route.js';

/** A running reference resources server. */
export interface ReferenceServer {
  /** Base URL, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** The bound port (the free port picked when `port` was 0). */
  port: number;
  /** A copy of the counters served on `GET /stats`. */
  stats(): ServerStats;
  /** Zeroes the counters (requests in flight stay counted as in flight). */
  resetStats(): void;
  /** Stops listening and destroys every connection, hanging ones included. Idempotent. */
  close(): Promise<void>;
}

/** Idle keep-alive sockets live longer than any client pool keeps them (undici: 4 s by default). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** `/verify` path with NeMo Gym's observability prefix (spec §2.0). */
const PREFIXED_VERIFY = /^\/ng-rollout\/[A-Za-z0-9][A-Za-z0-9._-]*\/verify$/;

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Answers an exception like a NeMo Gym server: 422 for validation, else 500 with the repr. */
function fail(res: ServerResponse, error: unknown): void {
  if (res.destroyed) return;
  if (res.headersSent) {
    res.destroy();
  } else if (error instanceof RequestValidationError) {
    sendJson(res, 422, { detail: error.detail });
  } else if (error instanceof AggregationError) {
    sendJsonText(res, 500, pythonExceptionBody(error.pythonType, error.message));
  } else {
    const { name, message } = error instanceof Error ? error : { name: 'Exception', message: String(error) };
    sendJsonText(res, 500, pythonExceptionBody(name, message));
  }
}

/** Handlers keyed by `<METHOD> <path>`. */
function handlers(options: ReferenceServerOptions, stats: StatsRecorder): Map<string, Handler> {
  const modeBody = JSON.stringify(options.mode);
  return new Map<string, Handler>([
    ['GET /', (_req, res) => sendJson(res, 200, { status: 'ok' })],
    [
      'GET /reverify_mode',
      (_req, res) => {
        stats.request('reverify_mode');
        sendJsonText(res, 200, modeBody);
      },
    ],
    ['POST /verify', createVerifyHandler(options, stats)],
    [
      'POST /aggregate_metrics',
      (req, res) => {
        stats.request('aggregate_metrics');
        return handleAggregateMetrics(req, res);
      },
    ],
    ['GET /stats', (_req, res) => sendJson(res, 200, stats.snapshot())],
  ]);
}

/**
 * Starts the reference resources server (a fast, NeMo Gym-compatible mcqa-style RS on
 * `node:http`) and resolves once it listens. Routes: `GET /`, `GET /reverify_mode`,
 * `POST /verify` (also `/ng-rollout/<id>/verify`), `POST /aggregate_metrics`, `GET /stats`.
 * Options are validated with `referenceServerOptionsSchema` (throws a ZodError when invalid).
 */
export async function startReferenceServer(opts: Partial<ReferenceServerOptions> = {}): Promise<ReferenceServer> {
  const options = referenceServerOptionsSchema.parse(opts);
  const stats = new StatsRecorder();
  const table = handlers(options, stats);
  const knownPaths = new Set([...table.keys()].map((key) => key.split(' ')[1]));

  const server = createServer((req, res) => {
    const rawPath = (req.url ?? '/').split('?', 1)[0];
    const path = PREFIXED_VERIFY.test(rawPath) ? '/verify' : rawPath;
    const handler = table.get(`${req.method} ${path}`);
    if (!handler) {
      req.resume();
      const known = knownPaths.has(path);
      sendJson(res, known ? 405 : 404, { detail: known ? 'Method Not Allowed' : 'Not Found' });
      return;
    }
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((error: unknown) => fail(res, error));
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.maxRequestsPerSocket = 0;
  server.requestTimeout = 0; // a large /aggregate_metrics upload may take long

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
