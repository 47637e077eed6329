/** The pure rules of a lone row's probe (activities/verify-batch/probe.ts) and of a hung aggregation (src/contract/aggregate-*.ts). */
import { describe, expect, it } from 'vitest';
import { loneRowFailure } from '../../activities/verify-batch/probe.js';
import { ServerReplies } from '../../activities/verify-batch/server-replies.js';
import { AGGREGATE_TIMEOUT_FLOOR_MS, aggregateTimeoutMs } from '../../src/contract/aggregate-timeout.js';
import { aggregateWaitLine, isAggregateWait } from '../../src/contract/aggregate-wait.js';

describe('loneRowFailure', () => {
  const up = () => Promise.resolve(true);
  const down = () => Promise.resolve(false);
  it('the server answered another request meanwhile: the failure is the row own, whatever GET / says', async () => {
    expect(await loneRowFailure({ answered: 1, failed: 9 }, 6, down)).toBe(true);
  });
  it('other requests failed too and none was answered: an outage, GET / not asked', async () => {
    expect(await loneRowFailure({ answered: 0, failed: 7 }, 6, up)).toBe(false);
  });
  it('nothing else was sent: GET / decides', async () => {
    expect(await loneRowFailure({ answered: 0, failed: 6 }, 6, up)).toBe(true);
    expect(await loneRowFailure({ answered: 0, failed: 6 }, 6, down)).toBe(false);
  });
});

describe('ServerReplies', () => {
  it('counts 2xx and retryable replies per server since a mark; rejections are neither', async () => {
    const replies = new ServerReplies();
    const kinds = ['ok', 'retryable', 'rejected'] as const;
    let n = 0;
    const client = replies.client({
      verifyOnce: () => {
        const kind = kinds[n++ % 3];
        return Promise.resolve(
          kind === 'ok'
            ? { kind, status: 200, body: Buffer.from('{}') }
            : kind === 'rejected'
              ? { kind, status: 422, excerpt: '' }
              : { kind, reason: 'x' },
        );
      },
    });
    await client.verifyOnce('http://a', '{}');
    const mark = replies.mark('http://a');
    for (let i = 0; i < 3; i++) await client.verifyOnce('http://a', '{}');
    await client.verifyOnce('http://b', '{}');
    expect(replies.since('http://a', mark)).toEqual({ answered: 1, failed: 1 });
  });
});

describe('aggregateTimeoutMs', () => {
  it('a floor of --request-timeout (at least 5 min), plus 2 ms per row', () => {
    expect(aggregateTimeoutMs(1000, 0)).toBe(AGGREGATE_TIMEOUT_FLOOR_MS);
    expect(aggregateTimeoutMs(600_000, 0)).toBe(600_000);
    expect(aggregateTimeoutMs(600_000, 1_000_000)).toBe(600_000 + 2_000_000);
  });
});

describe('aggregateWaitLine', () => {
  const w = { server: 'rs', url: 'http://h:1', since: 1_000, timeoutMs: 300_000 };
  it('nothing within 5 s, then what the phase waits for', () => {
    expect(isAggregateWait(w)).toBe(true);
    expect(isAggregateWait({ counts: {} })).toBe(false);
    expect(aggregateWaitLine(w, 5_999)).toBeNull();
    expect(aggregateWaitLine(w, 13_500)).toBe(
      "Waiting: resources server 'rs' at http://h:1 has not answered POST /aggregate_metrics for 12 s; it gets 300 s at this size, then the run ends with its outputs complete (Ctrl-C stops waiting)",
    );
  });
});
