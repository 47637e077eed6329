/**
 * A worker's HTTP pool to a resources server holds as many requests in flight as the run's lanes
 * send (activities/deps.ts): at 256 connections, a run at `--concurrency 1024` kept 256 in flight.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createActivityDeps } from '../../activities/deps.js';

describe('createActivityDeps: the verifier pool', () => {
  it('sends 600 requests to one server at once (no pool cap below a high --concurrency)', async () => {
    const want = 600;
    const open: ServerResponse[] = [];
    let peak = 0;
    const answerAll = () => {
      for (const res of open.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"reward":1}');
    };
    // Answers once `want` requests are open at once (or, when the pool holds some back, after 5 s).
    const fallback = setTimeout(answerAll, 5_000);
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        open.push(res);
        peak = Math.max(peak, open.length);
        if (open.length >= want) answerAll();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const deps = createActivityDeps();
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = deps.verifier(60_000);
      await Promise.all(Array.from({ length: want }, () => client.verifyOnce(url, '{}')));
      expect(peak).toBe(want);
    } finally {
      clearTimeout(fallback);
      await deps.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
