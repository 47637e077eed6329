import { describe, expect, it } from 'vitest';
import {
  batchAllowance,
  batchShare,
  budgetSpent,
  budgetSpentMessage,
  requestsLeft,
  requestsShown,
  shellWord,
} from '../../workflows/budget.js';
import { RequestAllowance, AllowanceSpent } from '../../activities/verify-batch/allowance.js';
import { emptyCounts, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';

describe('request budget arithmetic', () => {
  it('what is left: the budget less the requests made and the allowances of batches in flight, never below 0', () => {
    expect(requestsLeft({ maxRequests: 100, requestsUsed: 30 }, [10, 20])).toBe(40);
    expect(requestsLeft({ maxRequests: 100, requestsUsed: 90 }, [6, 6])).toBe(0);
    expect(requestsLeft({ maxRequests: 10, requestsUsed: 12 }, [])).toBe(0); // lowered below what was made
    expect(requestsLeft({ maxRequests: null, requestsUsed: 5 }, [1_000_000])).toBe(Number.POSITIVE_INFINITY);
  });

  it("a batch's allowance is its share (rows plus one retry per lane), or what is left when less", () => {
    expect(batchShare(500, 8)).toBe(508);
    expect(batchAllowance(500, 8, 10_000)).toBe(508);
    expect(batchAllowance(500, 8, 17)).toBe(17);
    expect(batchAllowance(3, 1, Number.POSITIVE_INFINITY)).toBe(4);
  });

  it('handing out allowances one batch at a time never promises more than the budget, and promises all of it', () => {
    for (const [max, rows, lanes, batches] of [
      [12, 5, 1, 6],
      [1, 500, 8, 3],
      [1000, 7, 3, 200],
      [37, 10, 4, 2],
    ]) {
      const b = { maxRequests: max, requestsUsed: 0 };
      const promised: number[] = [];
      for (let i = 0; i < batches; i++) {
        const left = requestsLeft(b, promised);
        if (left === 0) break;
        promised.push(batchAllowance(rows, lanes, left));
      }
      const total = promised.reduce((a, c) => a + c, 0);
      expect(total).toBeLessThanOrEqual(max);
      expect(total).toBe(Math.min(max, batches * batchShare(rows, lanes)));
      expect(promised.every((a) => a >= 1)).toBe(true);
    }
  });

  it('spent, shown, and the line that says how to raise it (the output path quoted for a shell when it must be)', () => {
    expect(budgetSpent({ maxRequests: 12, requestsUsed: 12 })).toBe(true);
    expect(budgetSpent({ maxRequests: 12, requestsUsed: 11 })).toBe(false);
    expect(budgetSpent({ maxRequests: null, requestsUsed: 1e9 })).toBe(false);
    expect(requestsShown({ maxRequests: 12, requestsUsed: 7 })).toBe('7/12');
    expect(requestsShown({ maxRequests: null, requestsUsed: 7 })).toBe('7');
    expect(shellWord('/data/run 1/out.jsonl')).toBe("'/data/run 1/out.jsonl'");
    expect(shellWord("/data/it's.jsonl")).toBe("'/data/it'\\''s.jsonl'");
    expect(budgetSpentMessage({ maxRequests: 12, requestsUsed: 12 }, '/data/out.jsonl', 20)).toBe(
      'Paused: the request budget is spent (12 of --max-requests 12 /verify requests made); unsent rows wait. ' +
        'Raise it with: reverify control -o /data/out.jsonl --max-requests 32',
    );
  });
});

describe("a batch's allowance (activities/verify-batch/allowance.ts)", () => {
  const checkpoint = (): Checkpoint => ({
    done: [],
    judgeFailedRows: [],
    mainBytes: 0,
    sidecarBytes: 0,
    counts: emptyCounts(),
    strikes: {},
  });

  it('counts every request in the checkpoint, and refuses the one beyond the allowance before it is sent', async () => {
    const cp = checkpoint();
    const a = new RequestAllowance(cp, 2);
    let sent = 0;
    const client = a.client({ verifyOnce: () => Promise.resolve({ kind: 'ok', status: 200, body: '{}' } as never).finally(() => sent++) });
    await client.verifyOnce('http://x', '{}');
    await client.verifyOnce('http://x', '{}');
    expect(a.spent()).toBe(true);
    expect(() => client.verifyOnce('http://x', '{}')).toThrow(AllowanceSpent);
    expect(sent).toBe(2);
    expect(cp.requestsUsed).toBe(2);
  });

  it('goes on counting from a checkpoint (a retried attempt); without an allowance it only counts', () => {
    const cp = { ...checkpoint(), requestsUsed: 5 };
    expect(new RequestAllowance(cp, 5).spent()).toBe(true);
    const free = new RequestAllowance(checkpoint(), undefined);
    for (let i = 0; i < 1000; i++) free.take();
    expect(free.used).toBe(1000);
    expect(free.spent()).toBe(false);
  });
});
