import { describe, expect, it } from 'vitest';
import type { VerifyReply } from '../../src/verifier/client.js';
import { ThrottleGate } from '../../src/verifier/throttle-gate.js';
import { verifyWithRetries } from '../../src/verifier/verify-with-retries.js';

const URL_A = 'http://a';
const settledOf = async (p: Promise<unknown>) =>
  Promise.race([p.then(() => 'settled'), new Promise((r) => setImmediate(() => r('pending')))]);

describe('the throttle gate', () => {
  it('holds new rows to a server while one of its requests waits out a Retry-After, and only that server', async () => {
    const gate = new ThrottleGate();
    await gate.clear(URL_A);
    gate.hold(URL_A);
    gate.hold(URL_A);
    const waiting = gate.clear(URL_A);
    expect(await settledOf(waiting)).toBe('pending');
    expect(await settledOf(gate.clear('http://b'))).toBe('settled');
    gate.release(URL_A);
    expect(await settledOf(waiting)).toBe('pending');
    gate.release(URL_A);
    expect(await settledOf(waiting)).toBe('settled');
  });

  it('a wait at the gate ends when its signal aborts', async () => {
    const gate = new ThrottleGate();
    gate.hold(URL_A);
    const stop = new AbortController();
    const waiting = gate.clear(URL_A, stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });

  it('verifyWithRetries: a row refused with 429 holds new rows back until it is sent again, and counts its wait', async () => {
    const gate = new ThrottleGate();
    const sent: string[] = [];
    let first = true;
    const client = {
      verifyOnce: (_url: string, body: string | Buffer): Promise<VerifyReply> => {
        sent.push(String(body));
        if (body === 'refused' && first) {
          first = false;
          return Promise.resolve({ kind: 'retryable', reason: 'HTTP 429', status: 429, retryAfterMs: 30 });
        }
        return Promise.resolve({ kind: 'ok', status: 200, body: Buffer.from('{}') } as VerifyReply);
      },
    };
    const waits: number[] = [];
    const opts = { maxTries: 3, baseMs: 1, maxMs: 1, gate, random: () => 0, onThrottleWait: (ms: number) => waits.push(ms) };
    const refused = verifyWithRetries(client, URL_A, 'refused', opts);
    await new Promise((r) => setImmediate(r)); // the 429 is in: the gate is held
    const fresh = verifyWithRetries(client, URL_A, 'fresh', opts);
    await Promise.all([refused, fresh]);
    expect(sent).toEqual(['refused', 'refused', 'fresh']);
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});
