import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/contract/failure-types.js';
import { REPEAT_AFTER_MS, RetryNotices, retryNotice } from '../../src/cli/retry-notices.js';

const failing = (
  id: string,
  attempt: number,
  message = 'resources server at http://x is unavailable: POST /verify failed 6 time(s), last: HTTP 500',
) => ({
  activityId: id,
  activityType: { name: 'verifyBatch' },
  attempt,
  lastFailure: { message },
});

describe('retry notices (why a run waits)', () => {
  it('names the activity, the attempt that failed and its failure; nothing for a first attempt', () => {
    expect(retryNotice(failing('3', 4))).toBe(
      'Waiting: verifyBatch attempt 3 failed, Temporal retries it: resources server at http://x is unavailable: POST /verify failed 6 time(s), last: HTTP 500',
    );
    expect(retryNotice({ activityId: '3', attempt: 1 })).toBeNull();
    expect(retryNotice({ activityId: '3', attempt: 2, lastFailure: null })).toBeNull();
  });

  it('tells each failed attempt once, and the same failure text at most once a minute', () => {
    const n = new RetryNotices();
    expect(n.take([failing('3', 2), failing('4', 2)], 0)).toHaveLength(1); // same text: one line
    expect(n.take([failing('3', 2)], 1000)).toHaveLength(0); // already told
    expect(n.take([failing('3', 3)], 2000)).toHaveLength(0); // same text within a minute
    expect(n.take([failing('3', 4, 'another reason')], 3000)).toHaveLength(1);
    expect(n.take([failing('4', 3)], REPEAT_AFTER_MS + 1)).toHaveLength(1); // a minute later
  });

  it('says nothing of a loan of lanes moving on to another worker (expected, not a failure to wait out)', () => {
    const moving = {
      activityId: '9',
      activityType: { name: 'lendLanes' },
      attempt: 5,
      lastFailure: { message: 'no row of round 1 left to lend 32 lane(s) to …', applicationFailureInfo: { type: FailureType.LoanMoves } },
    };
    expect(retryNotice(moving)).toBeNull();
  });
});
