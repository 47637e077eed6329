/** The wait between re-judgment rounds: seconds for a few failures, backing off to a ceiling for an outage. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_REJUDGE_DELAY_MS, REJUDGE_DELAY_CEILING_MS, rejudgeDelayMs } from '../../src/config/run-defaults.js';

describe('rejudgeDelayMs', () => {
  it('starts at 3 s by default and doubles every round', () => {
    expect(DEFAULT_REJUDGE_DELAY_MS).toBe(3_000);
    expect([0, 1, 2, 3].map((r) => rejudgeDelayMs(DEFAULT_REJUDGE_DELAY_MS, r))).toEqual([3_000, 6_000, 12_000, 24_000]);
  });

  it('stops doubling at 5 minutes', () => {
    expect(REJUDGE_DELAY_CEILING_MS).toBe(300_000);
    expect(rejudgeDelayMs(DEFAULT_REJUDGE_DELAY_MS, 6)).toBe(192_000);
    expect(rejudgeDelayMs(DEFAULT_REJUDGE_DELAY_MS, 7)).toBe(300_000);
    expect(rejudgeDelayMs(DEFAULT_REJUDGE_DELAY_MS, 40)).toBe(300_000);
  });

  it('--rejudge-delay overrides: 0 never waits; a first wait above the ceiling is kept, not doubled', () => {
    expect(rejudgeDelayMs(0, 5)).toBe(0);
    expect(rejudgeDelayMs(60_000, 1)).toBe(120_000);
    expect(rejudgeDelayMs(600_000, 0)).toBe(600_000);
    expect(rejudgeDelayMs(600_000, 3)).toBe(600_000);
  });
});
