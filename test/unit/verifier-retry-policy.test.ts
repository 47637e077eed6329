import { describe, expect, it } from 'vitest';
import { classifyVerifyReply, describeTransportError, settleReply } from '../../src/verifier/client.js';
import { bodyExcerpt, truncateOneLine } from '../../src/verifier/excerpt.js';
import { parseRetryAfterMs } from '../../src/verifier/retry-after.js';
import { backoffDelayMs, DEFAULT_RETRY_AFTER_CAP_MS, DEFAULT_VERIFY_RETRY } from '../../src/verifier/retry-policy.js';

describe('backoffDelayMs', () => {
  const opts = { baseMs: 250, maxMs: 15_000 };

  it('defaults', () => {
    expect(DEFAULT_VERIFY_RETRY).toEqual({ maxTries: 6, baseMs: 250, maxMs: 15_000 });
  });

  it('full jitter: uniform in [0, min(maxMs, base * 2^(attempt-1)))', () => {
    const almostOne = () => 0.999999;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffDelayMs(a, opts, almostOne))).toEqual([
      249, 499, 999, 1999, 3999, 7999, 14_999, 14_999,
    ]);
    expect(backoffDelayMs(3, opts, () => 0)).toBe(0);
    expect(backoffDelayMs(3, opts, () => 0.5)).toBe(500);
  });

  it('every delay lies within its window for many random draws', () => {
    let seed = 42;
    const rng = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let attempt = 1; attempt <= 12; attempt++) {
      const window = Math.min(15_000, 250 * 2 ** (attempt - 1));
      for (let i = 0; i < 200; i++) {
        const d = backoffDelayMs(attempt, opts, rng);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(window);
        expect(Number.isInteger(d)).toBe(true);
      }
    }
  });

  it('huge attempt numbers and odd random values stay finite and bounded', () => {
    expect(backoffDelayMs(10_000, opts, () => 0.999)).toBe(14_985);
    expect(backoffDelayMs(0, opts, () => 0.5)).toBe(125); // treated as attempt 1
    expect(backoffDelayMs(2, opts, () => 1)).toBeLessThan(500);
    expect(backoffDelayMs(2, opts, () => Number.NaN)).toBe(0);
    expect(backoffDelayMs(2, opts, () => -3)).toBe(0);
  });

  it('Retry-After is a floor (with a small spread above it)', () => {
    expect(backoffDelayMs(1, { ...opts, retryAfterMs: 5000 }, () => 0)).toBe(5000);
    const d = backoffDelayMs(1, { ...opts, retryAfterMs: 5000 }, () => 0.5);
    expect(d).toBeGreaterThanOrEqual(5000);
    expect(d).toBeLessThanOrEqual(5000 + 250);
    // A shorter Retry-After than the jittered delay does not shorten it.
    expect(backoffDelayMs(6, { ...opts, retryAfterMs: 10 }, () => 0.9)).toBe(7200);
    // Zero or negative Retry-After means "no hint".
    expect(backoffDelayMs(1, { ...opts, retryAfterMs: 0 }, () => 0)).toBe(0);
  });

  it('Retry-After is capped', () => {
    expect(backoffDelayMs(1, { ...opts, retryAfterMs: 3_600_000 }, () => 0)).toBe(DEFAULT_RETRY_AFTER_CAP_MS);
    expect(backoffDelayMs(1, { ...opts, retryAfterMs: 3_600_000, retryAfterCapMs: 30_000 }, () => 0)).toBe(30_000);
    // The default cap is never below maxMs.
    expect(backoffDelayMs(1, { baseMs: 1000, maxMs: 300_000, retryAfterMs: 3_600_000 }, () => 0)).toBe(300_000);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('delay-seconds', () => {
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs('7', now)).toBe(7000);
    expect(parseRetryAfterMs(' 2 ', now)).toBe(2000);
    expect(parseRetryAfterMs('1.5', now)).toBe(1500);
    expect(parseRetryAfterMs(['3', '9'], now)).toBe(3000);
  });

  it('HTTP-date, in the future or past', () => {
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('absent or garbage', () => {
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs('', now)).toBeUndefined();
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-5', now)).toBeUndefined();
  });
});

describe('classifyVerifyReply, settleReply', () => {
  const settled = (status: number, text: string) => {
    const r = classifyVerifyReply(status, undefined, Buffer.from(text));
    if (r.kind === 'retryable') throw new Error('retryable');
    return settleReply(r);
  };

  it('a 2xx is answered as it came, its body not parsed yet', () => {
    expect(classifyVerifyReply(200, undefined, Buffer.from('{"a":'))).toEqual({ kind: 'ok', status: 200, body: Buffer.from('{"a":') });
  });

  it('2xx JSON object is ok once settled, verbatim on one line', () => {
    const body = '  {"reward": 1, "n": 12345678901234567890123}\n';
    expect(settled(200, body)).toEqual({ kind: 'ok', status: 200, body: body.trim(), result: JSON.parse(body) });
    const indented = '{\n  "reward": 1.0,\n  "s": "a \\" b\\n c",\r\n  "l": [1, 2]\n}\n';
    expect(settled(200, indented)).toMatchObject({
      kind: 'ok',
      body: '{"reward":1.0,"s":"a \\" b\\n c","l":[1,2]}',
    });
    expect(settled(201, '{}')).toEqual({ kind: 'ok', status: 201, body: '{}', result: {} });
  });

  it('2xx that is not a JSON object is rejected once settled', () => {
    for (const b of ['', 'null', '[]', '"x"', '{"a":', '{} {}']) {
      const r = settled(200, b);
      expect(r.kind).toBe('rejected');
      expect(r.kind === 'rejected' && r.excerpt.startsWith('reply is not a JSON object:')).toBe(true);
    }
  });

  it('retryable statuses, with Retry-After', () => {
    expect(classifyVerifyReply(429, '3', Buffer.from('"slow"'))).toEqual({
      kind: 'retryable',
      status: 429,
      reason: 'HTTP 429',
      excerpt: 'slow',
      retryAfterMs: 3000,
    });
    for (const s of [408, 500, 502, 503, 504, 599]) expect(classifyVerifyReply(s, undefined, Buffer.alloc(0)).kind).toBe('retryable');
  });

  it('other statuses are rejected', () => {
    for (const s of [301, 400, 401, 403, 404, 409, 413, 422]) {
      expect(classifyVerifyReply(s, undefined, Buffer.from('x'))).toEqual({ kind: 'rejected', status: s, excerpt: 'x' });
    }
  });
});

describe('bodyExcerpt', () => {
  it('FastAPI 422 detail', () => {
    const body = JSON.stringify({
      detail: [
        { type: 'missing', loc: ['body', 'response'], msg: 'Field required', input: {} },
        { type: 'float_type', loc: ['body', 'reward'], msg: 'Input should be a valid number', input: 'x' },
      ],
    });
    expect(bodyExcerpt(body)).toBe('body.response: Field required; body.reward: Input should be a valid number');
  });

  it('500 JSON string bodies are unwrapped, whitespace collapsed, length capped', () => {
    expect(bodyExcerpt('"ValueError(\'x\')\\n  at line"')).toBe("ValueError('x') at line");
    expect(bodyExcerpt('{"detail":"Not Found"}')).toBe('Not Found');
    expect(bodyExcerpt('')).toBe('(empty body)');
    const long = bodyExcerpt('z'.repeat(1000));
    expect(long.length).toBe(300);
    expect(long.endsWith('…')).toBe(true);
    expect(truncateOneLine('a\r\n\tb', 10)).toBe('a b');
  });
});

describe('describeTransportError', () => {
  it('system errors become "syscall CODE"', () => {
    const e = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', syscall: 'connect' });
    expect(describeTransportError(e)).toBe('connect ECONNREFUSED');
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND judge'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: 'judge',
    });
    expect(describeTransportError(dns)).toBe('getaddrinfo ENOTFOUND judge');
  });

  it('AggregateError (happy eyeballs) uses its first error', () => {
    const inner = Object.assign(new Error('x'), { code: 'ECONNREFUSED', syscall: 'connect' });
    expect(describeTransportError(new AggregateError([inner], ''))).toBe('connect ECONNREFUSED');
  });

  it('undici errors keep message and code', () => {
    const e = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(describeTransportError(e)).toBe('other side closed (UND_ERR_SOCKET)');
  });
});
