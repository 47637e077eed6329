import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { settleReply, VerifierClient } from '../../src/verifier/client.js';
import { AggregateMetricsError, VerifierUnavailableError } from '../../src/verifier/errors.js';
import { verifyWithRetries, type VerifyRetryInfo } from '../../src/verifier/verify-with-retries.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-client-');
/** Where an `/aggregate_metrics` reply goes. */
const replyPath = () => tmp.unique('reply-', '.json');

// Real HTTP servers (node:http on port 0) and the real undici client: no mocks.

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

interface TestServer {
  url: string;
  port: number;
  /** Number of TCP connections the server accepted. */
  connections: () => number;
  requests: () => number;
  close: () => Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function startServer(handler: Handler, opts: { readBody?: boolean } = {}): Promise<TestServer> {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests++;
    if (opts.readBody === false) {
      handler(req, res, Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${port}`, port, connections: () => connections, requests: () => requests, close };
}

function newClient(opts: Partial<ConstructorParameters<typeof VerifierClient>[0]> = {}): VerifierClient {
  const client = new VerifierClient({ connectionsPerServer: 8, requestTimeoutMs: 10_000, ...opts });
  cleanups.push(() => client.close());
  return client;
}

/** A port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function json(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

const REQUEST = JSON.stringify({ responses_create_params: { input: 'q' }, response: { id: 'r' }, _ng_task_index: 1 });

describe('VerifierClient.verifyOnce', () => {
  it('returns ok with the body text exactly as received (big integers untouched); settled, it is parsed', async () => {
    const reply = '{"reward": 1.0, "big": 123456789012345678901234567890, "note": "é"}';
    let seen: { method?: string; url?: string; type?: string; body?: string } = {};
    const srv = await startServer((req, res, body) => {
      seen = { method: req.method, url: req.url, type: req.headers['content-type'], body: body.toString('utf8') };
      json(res, 200, reply);
    });
    const r = await newClient().verifyOnce(srv.url, REQUEST);
    expect(r).toEqual({ kind: 'ok', status: 200, body: Buffer.from(reply) });
    if (r.kind !== 'ok') return;
    expect(settleReply(r)).toEqual({ kind: 'ok', status: 200, body: reply, result: JSON.parse(reply) });
    expect(seen).toEqual({ method: 'POST', url: '/verify', type: 'application/json', body: REQUEST });
  });

  it('a reply in pieces (a character split between them) is whole; a UTF-8 byte order mark is dropped when settled, as body.text() does', async () => {
    const reply = '{"reward": 1, "note": "' + 'é€'.repeat(5000) + '"}';
    const bytes = Buffer.from(reply, 'utf8');
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Odd cuts through two- and three-byte characters, each written on its own.
      for (let at = 0; at < bytes.length; at += 4097) res.write(bytes.subarray(at, Math.min(bytes.length, at + 4097)));
      res.end();
    });
    const whole = await newClient().verifyOnce(srv.url, REQUEST);
    expect(whole).toEqual({ kind: 'ok', status: 200, body: bytes });
    if (whole.kind === 'ok') expect(settleReply(whole)).toMatchObject({ kind: 'ok', body: reply });
    const bom = await startServer((_req, res) => json(res, 200, '\ufeff{"reward": 0}'));
    const marked = await newClient().verifyOnce(bom.url, REQUEST);
    expect(marked).toEqual({ kind: 'ok', status: 200, body: Buffer.from('\ufeff{"reward": 0}') });
    if (marked.kind === 'ok')
      expect(settleReply(marked)).toEqual({ kind: 'ok', status: 200, body: '{"reward": 0}', result: { reward: 0 } });
  });

  it('keeps a path prefix of the server URL', async () => {
    let url = '';
    const srv = await startServer((req, res) => {
      url = req.url ?? '';
      json(res, 200, '{}');
    });
    const r = await newClient().verifyOnce(`${srv.url}/prefix/`, REQUEST);
    expect(r.kind).toBe('ok');
    expect(url).toBe('/prefix/verify');
  });

  it('422 is rejected with a short one-line excerpt of the FastAPI detail', async () => {
    const detail = {
      detail: [{ type: 'missing', loc: ['body', 'response'], msg: 'Field required', input: { big: 'x'.repeat(5000) } }],
    };
    const srv = await startServer((_req, res) => json(res, 422, JSON.stringify(detail)));
    const r = await newClient().verifyOnce(srv.url, REQUEST);
    expect(r).toEqual({ kind: 'rejected', status: 422, excerpt: 'body.response: Field required' });
  });

  it('other 4xx bodies are cut to at most 300 characters on one line', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`bad\nrequest\n${'y'.repeat(2000)}`);
    });
    const r = await newClient().verifyOnce(srv.url, REQUEST);
    expect(r.kind).toBe('rejected');
    if (r.kind !== 'rejected') return;
    expect(r.status).toBe(400);
    expect(r.excerpt.length).toBeLessThanOrEqual(300);
    expect(r.excerpt).not.toMatch(/\n/);
    expect(r.excerpt.startsWith('bad request yyy')).toBe(true);
  });

  it('a 2xx whose body is not a JSON object is rejected once settled (contract violation; not retried)', async () => {
    const bodies = ['[1,2]', '"ok"', 'not json', '', '{"truncated": '];
    let i = 0;
    const srv = await startServer((_req, res) => json(res, 200, bodies[i++]));
    const client = newClient();
    for (const _ of bodies) {
      const answered = await client.verifyOnce(srv.url, REQUEST);
      if (answered.kind === 'retryable') throw new Error(`retryable: ${answered.reason}`);
      const r = settleReply(answered);
      expect(r.kind).toBe('rejected');
      if (r.kind === 'rejected') {
        expect(r.status).toBe(200);
        expect(r.excerpt).toMatch(/^reply is not a JSON object: /);
      }
    }
  });

  it('408, 429 and 5xx are retryable; Retry-After seconds and HTTP-date are parsed', async () => {
    const date = new Date(Date.now() + 60_000).toUTCString();
    const plan: Array<[number, Record<string, string>, string]> = [
      [408, {}, '"timeout"'],
      [429, { 'retry-after': '7' }, '"slow down"'],
      [503, { 'retry-after': date }, '"maintenance"'],
      [500, {}, '"Hit an exception in X___y calling an inner server: boom"'],
    ];
    let i = 0;
    const srv = await startServer((_req, res) => {
      const [status, headers, body] = plan[i++];
      json(res, status, body, headers);
    });
    const client = newClient();
    const r408 = await client.verifyOnce(srv.url, REQUEST);
    expect(r408).toEqual({ kind: 'retryable', status: 408, reason: 'HTTP 408', excerpt: 'timeout' });
    const r429 = await client.verifyOnce(srv.url, REQUEST);
    expect(r429).toEqual({ kind: 'retryable', status: 429, reason: 'HTTP 429', excerpt: 'slow down', retryAfterMs: 7000 });
    // The date less the moment the reply was read, which lies between these two.
    const before = Date.now();
    const r503 = await client.verifyOnce(srv.url, REQUEST);
    const after = Date.now();
    expect(r503.kind).toBe('retryable');
    if (r503.kind === 'retryable') {
      expect(r503.retryAfterMs).toBeGreaterThanOrEqual(Date.parse(date) - after);
      expect(r503.retryAfterMs).toBeLessThanOrEqual(Date.parse(date) - before);
    }
    const r500 = await client.verifyOnce(srv.url, REQUEST);
    expect(r500).toMatchObject({ kind: 'retryable', status: 500 });
    if (r500.kind === 'retryable') expect(r500.reason).toBe('HTTP 500');
    if (r500.kind === 'retryable') expect(r500.excerpt).toContain('calling an inner server: boom');
  });

  it('connection refused is retryable and names the error', async () => {
    const port = await closedPort();
    const r = await newClient().verifyOnce(`http://127.0.0.1:${port}`, REQUEST);
    expect(r.kind).toBe('retryable');
    if (r.kind === 'retryable') expect(r.reason).toBe('connect ECONNREFUSED');
  });

  it('a DNS failure is retryable', async () => {
    const r = await newClient({ requestTimeoutMs: 5_000 }).verifyOnce('http://no-such-host.invalid:8000', REQUEST);
    expect(r.kind).toBe('retryable');
    if (r.kind === 'retryable') expect(r.reason).toMatch(/^getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$|request timeout/);
  });

  it('a socket closed by the server before replying is retryable', async () => {
    const srv = await startServer((req) => req.socket.destroy());
    const r = await newClient().verifyOnce(srv.url, REQUEST);
    expect(r.kind).toBe('retryable');
    if (r.kind === 'retryable') expect(r.reason).toMatch(/closed|reset|socket/i);
  });

  it('times out on a server that never answers (headers)', async () => {
    await startServer(() => undefined).then(async (srv) => {
      const started = Date.now();
      const r = await newClient({ requestTimeoutMs: 300 }).verifyOnce(srv.url, REQUEST);
      // Ended by the request timeout (the reason says so), never before it; load can only delay it.
      expect(r).toEqual({ kind: 'retryable', reason: 'no complete reply within 300 ms (request timeout)' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    });
  });

  it('the timeout covers the whole request: a body that trickles forever times out too', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"reward": ');
      // Keep sending a byte every 50 ms: undici's idle bodyTimeout alone would never fire.
      const t = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(t));
    });
    const started = Date.now();
    const r = await newClient({ requestTimeoutMs: 400 }).verifyOnce(srv.url, REQUEST);
    expect(r.kind).toBe('retryable');
    if (r.kind === 'retryable') expect(r.reason).toContain('request timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('an aborted signal rejects at once with its reason', async () => {
    const srv = await startServer(() => undefined);
    const ac = new AbortController();
    // The server never answers and the request timeout is an hour: only the abort can end it.
    const p = newClient({ requestTimeoutMs: 3_600_000 }).verifyOnce(srv.url, REQUEST, ac.signal);
    setTimeout(() => ac.abort(new Error('stop now')), 100);
    await expect(p).rejects.toThrow('stop now');
  });

  it('reuses keep-alive connections: sequential requests share sockets, concurrent ones use at most N', async () => {
    const srv = await startServer((_req, res) => setTimeout(() => json(res, 200, '{"reward":1}'), 5));
    const client = newClient({ connectionsPerServer: 4 });
    for (let i = 0; i < 30; i++) {
      expect((await client.verifyOnce(srv.url, REQUEST)).kind).toBe('ok');
    }
    expect(srv.requests()).toBe(30);
    // undici resolves the body before it marks the connection idle, so the 2nd back-to-back request
    // may open a 2nd socket; after that both are reused (30 requests, never more than 2 sockets).
    expect(srv.connections()).toBeLessThanOrEqual(2);
    const replies = await Promise.all(Array.from({ length: 40 }, () => client.verifyOnce(srv.url, REQUEST)));
    expect(replies.every((r) => r.kind === 'ok')).toBe(true);
    expect(srv.requests()).toBe(70);
    expect(srv.connections()).toBeLessThanOrEqual(4);
    expect(srv.connections()).toBeGreaterThanOrEqual(2);
  });

  it('an invalid server URL is a ConfigError', async () => {
    await expect(newClient().verifyOnce('not a url', REQUEST)).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('verifyWithRetries', () => {
  const fast = { maxTries: 6, baseMs: 10, maxMs: 50, random: () => 0.5 };

  it('retries a 500 and returns the following ok', async () => {
    let n = 0;
    const srv = await startServer((_req, res) => {
      n++;
      if (n === 1) json(res, 500, '"RuntimeError(\'judge crashed\')"');
      else json(res, 200, '{"reward":0.5}');
    });
    const retries: VerifyRetryInfo[] = [];
    const r = await verifyWithRetries(newClient(), srv.url, REQUEST, { ...fast, onRetry: (i) => retries.push(i) });
    expect(r).toEqual({ kind: 'ok', status: 200, body: Buffer.from('{"reward":0.5}') });
    expect(n).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, maxTries: 6, status: 500, serverUrl: srv.url });
    expect(retries[0].reason).toBe('HTTP 500');
  });

  it('does not retry a rejected reply', async () => {
    const srv = await startServer((_req, res) => json(res, 422, '{"detail":[{"loc":["body"],"msg":"bad"}]}'));
    const r = await verifyWithRetries(newClient(), srv.url, REQUEST, fast);
    expect(r).toEqual({ kind: 'rejected', status: 422, excerpt: 'body: bad' });
    expect(srv.requests()).toBe(1);
  });

  it('honours Retry-After as a floor (429 with Retry-After: 1)', async () => {
    let n = 0;
    const times: number[] = [];
    const srv = await startServer((_req, res) => {
      times.push(Date.now());
      n++;
      if (n === 1) json(res, 429, '"rate limited"', { 'retry-after': '1' });
      else json(res, 200, '{"reward":1}');
    });
    const retries: VerifyRetryInfo[] = [];
    const r = await verifyWithRetries(newClient(), srv.url, REQUEST, {
      maxTries: 3,
      baseMs: 10,
      maxMs: 20,
      random: () => 0,
      onRetry: (i) => retries.push(i),
    });
    expect(r.kind).toBe('ok');
    expect(times).toHaveLength(2);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(1000);
    expect(retries[0]).toMatchObject({ status: 429, retryAfterMs: 1000, delayMs: 1000 });
  });

  it('connection refused: VerifierUnavailableError after maxTries', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const retries: VerifyRetryInfo[] = [];
    const err = await verifyWithRetries(newClient(), url, REQUEST, {
      ...fast,
      maxTries: 4,
      serverName: 'mcqa',
      onRetry: (i) => retries.push(i),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerifierUnavailableError);
    const e = err as VerifierUnavailableError;
    expect(e.name).toBe('VerifierUnavailableError');
    expect(e.tries).toBe(4);
    expect(e.serverUrl).toBe(url);
    expect(e.lastReason).toBe('connect ECONNREFUSED');
    expect(e.lastStatus).toBeUndefined();
    expect(e.message).toBe(`resources server 'mcqa' at ${url} is unavailable: POST /verify failed 4 time(s), last: connect ECONNREFUSED`);
    expect(retries.map((i) => i.attempt)).toEqual([1, 2, 3]);
  });

  it('a persistent 503 ends in VerifierUnavailableError carrying the last status and body excerpt', async () => {
    const srv = await startServer((_req, res) => json(res, 503, '"overloaded"'));
    const err = await verifyWithRetries(newClient(), srv.url, REQUEST, { ...fast, maxTries: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerifierUnavailableError);
    expect((err as VerifierUnavailableError).lastStatus).toBe(503);
    expect((err as VerifierUnavailableError).lastExcerpt).toBe('overloaded');
    expect(srv.requests()).toBe(3);
  });

  // The server asks for a 120 s wait (the cap): a wait the abort did not cut short outlasts this test's 60 s timeout.
  it('abort during a backoff wait stops promptly', { timeout: 60_000 }, async () => {
    const srv = await startServer((_req, res) => json(res, 429, '"wait"', { 'retry-after': '120' }));
    const ac = new AbortController();
    const p = verifyWithRetries(newClient(), srv.url, REQUEST, {
      ...fast,
      signal: ac.signal,
      onRetry: () => setTimeout(() => ac.abort(new Error('cancelled by Temporal')), 50),
    });
    await expect(p).rejects.toThrow('cancelled by Temporal');
    expect(srv.requests()).toBe(1);
  });
});

/** A body file of `bytes` bytes (a JSON string of 'a's), and its SHA-256. */
function bodyFile(bytes: number): { path: string; sha256: string } {
  const path = tmp.unique('body-', '.json');
  const text = `{"verify_responses":["${'a'.repeat(bytes - 25)}"]}`;
  writeFileSync(path, text);
  return { path, sha256: createHash('sha256').update(text).digest('hex') };
}

/** An HTTP server run by `node -e script` in a child process; the script prints the port it listens on. */
async function startServerProcess(script: string): Promise<{ url: string }> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    child.kill();
    await new Promise((r) => child.once('exit', r));
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}` };
}

describe('VerifierClient.aggregateMetrics', () => {
  it('sends a 128 MiB body file from disk with its Content-Length, never chunked, byte for byte, in flat memory', async () => {
    const size = 128 * 1024 * 1024;
    const body = bodyFile(size);
    // The server runs in its own process, so that this process's memory is the client's alone.
    const srv = await startServerProcess(`
      const { createHash } = require('node:crypto');
      require('node:http').createServer((req, res) => {
        const hash = createHash('sha256');
        let received = 0;
        req.on('data', (c) => { received += c.length; hash.update(c); });
        req.on('end', () => res.end(JSON.stringify({ key_metrics: { 'mean/reward': 0.5 }, agent_metrics: {
          url: req.url, length: req.headers['content-length'] ?? null, chunked: req.headers['transfer-encoding'] ?? null,
          received, sha256: hash.digest('hex') } })));
      }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`);
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
    const metrics = await newClient().aggregateMetrics('mcqa', srv.url, body.path, replyPath());
    clearInterval(sampler);
    const seen = (JSON.parse(readFileSync(metrics.path, 'utf8')) as { agent_metrics: Record<string, unknown> }).agent_metrics;
    expect(seen).toEqual({
      url: '/aggregate_metrics',
      length: String(size),
      chunked: null,
      received: size,
      sha256: body.sha256,
    });
    // The body is read from disk a chunk at a time, never held whole: the buffers in use grow by
    // what the garbage collector lets pile up (about 32 MiB, whatever the body's size), not by 128 MiB.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
    expect(metrics.keyMetrics).toEqual({ 'mean/reward': 0.5 });
    expect(metrics.spans.group_level_metrics).toBeNull();
  });

  it('a server that refuses chunked request bodies (411) gets the body with its length, on a retry too', async () => {
    const body = bodyFile(300_000);
    const seen: Array<string | undefined> = [];
    const srv = await startServer((req, res, received) => {
      seen.push(req.headers['content-length']);
      if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] === undefined)
        json(res, 411, '"Length Required"');
      else json(res, 200, JSON.stringify({ key_metrics: { bytes: received.length } }));
    });
    const client = newClient();
    for (let i = 0; i < 2; i++) {
      const metrics = await client.aggregateMetrics('mcqa', srv.url, body.path, replyPath());
      expect(metrics.keyMetrics).toEqual({ bytes: 300_000 });
    }
    expect(seen).toEqual(['300000', '300000']);
  });

  it('non-2xx is an AggregateMetricsError naming the server, with status and excerpt', async () => {
    const srv = await startServer((_req, res) => json(res, 500, '"ValueError(\'duplicate key (1, 0)\')"'));
    const err = await newClient()
      .aggregateMetrics('mcqa', srv.url, bodyFile(100).path, replyPath())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateMetricsError);
    expect((err as AggregateMetricsError).status).toBe(500);
    expect((err as Error).message).toBe(
      `resources server 'mcqa' at ${srv.url}: POST /aggregate_metrics failed: HTTP 500: ValueError('duplicate key (1, 0)')`,
    );
  });

  it('a body file that cannot be read is its own error, unchanged (not a server failure)', async () => {
    const srv = await startServer((_req, res) => json(res, 200, '{}'));
    const err = await newClient()
      .aggregateMetrics('mcqa', srv.url, tmp.unique('missing-', '.json'), replyPath())
      .catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(AggregateMetricsError);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('a reply with the wrong shape is an AggregateMetricsError', async () => {
    const srv = await startServer((_req, res) => json(res, 200, '{"group_level_metrics": 3}'));
    await expect(newClient().aggregateMetrics('mcqa', srv.url, bodyFile(100).path, replyPath())).rejects.toThrow(
      /POST \/aggregate_metrics failed: unexpected reply \(group_level_metrics: /,
    );
  });
});

describe('VerifierClient.answers (is the server up at all?)', () => {
  it('true for any answer of GET / below 500 (200, 404); false for a 5xx and for no server', async () => {
    const statuses = [200, 404, 502, 503];
    for (const status of statuses) {
      let path = '';
      const srv = await startServer((req, res) => {
        path = `${req.method} ${req.url}`;
        json(res, status, '{}');
      });
      expect(await newClient().answers(srv.url), String(status)).toBe(status < 500);
      expect(path).toBe('GET /');
    }
    expect(await newClient().answers(`http://127.0.0.1:${await closedPort()}`)).toBe(false);
  });

  it('false when the server does not answer within the probe timeout', async () => {
    const srv = await startServer(() => undefined);
    expect(await newClient({ probeTimeoutMs: 200 }).answers(srv.url)).toBe(false);
  });
});

describe('VerifierClient.reverifyMode', () => {
  it('returns the mode', async () => {
    let path = '';
    const srv = await startServer((req, res) => {
      path = `${req.method} ${req.url}`;
      json(res, 200, '"stateless"');
    });
    expect(await newClient().reverifyMode('mcqa', srv.url)).toBe('stateless');
    expect(path).toBe('GET /reverify_mode');
  });

  it('connection refused: one-line ConfigError naming server and URL and what to do', async () => {
    const port = await closedPort();
    for (const host of ['127.0.0.1', 'localhost']) {
      const url = `http://${host}:${port}`;
      const err = await newClient()
        .reverifyMode('mcqa', url)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(
        `resources server 'mcqa' at ${url} is not reachable (connect ECONNREFUSED): start it, or fix its host/port in the config or pass --server mcqa=URL`,
      );
    }
  });

  it('404: says the server has no /reverify_mode route', async () => {
    const srv = await startServer((_req, res) => json(res, 404, '{"detail":"Not Found"}'));
    const err = await newClient()
      .reverifyMode('mcqa', srv.url)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `resources server 'mcqa' at ${srv.url} has no GET /reverify_mode route (HTTP 404): is it a NeMo Gym resources server? Check the URL, or fix its host/port in the config or pass --server mcqa=URL`,
    );
  });

  it('an unknown value is named', async () => {
    const bodies = ['"maybe"', 'stateless', '{"mode":"stateless"}'];
    let i = 0;
    const srv = await startServer((_req, res) => json(res, 200, bodies[i++]));
    const client = newClient();
    for (const shown of ['"maybe"', 'stateless', '{"mode":"stateless"}']) {
      const err = await client.reverifyMode('mcqa', srv.url).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(
        `resources server 'mcqa' at ${srv.url} answered GET /reverify_mode with ${shown}, expected one of "stateless", "unsupported", "unknown": update the resources server to a NeMo Gym version with reverify support`,
      );
    }
  });

  it('a 500 names the status and an excerpt on one line', async () => {
    const srv = await startServer((_req, res) => json(res, 500, '"Traceback\\n  boom"'));
    const err = await newClient()
      .reverifyMode('mcqa', srv.url)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `resources server 'mcqa' at ${srv.url} answered GET /reverify_mode with HTTP 500: Traceback boom; fix the server (see its log) and try again`,
    );
  });

  it('a server that does not answer in time', async () => {
    const srv = await startServer(() => undefined);
    const err = await newClient({ probeTimeoutMs: 200 })
      .reverifyMode('mcqa', srv.url)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /^resources server 'mcqa' at http:\/\/127\.0\.0\.1:\d+ did not answer GET \/reverify_mode within 200 ms: /,
    );
  });
});
