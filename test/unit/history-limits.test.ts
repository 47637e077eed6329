import { describe, expect, it } from 'vitest';
import { CONTINUE_AS_NEW_BYTES, CONTINUE_AS_NEW_EVENTS, continueAsNewDue } from '../../src/config/history-limits.js';

describe('continueAsNewDue', () => {
  const at = (continueAsNewSuggested: boolean, historyLength: number, historySize: number) =>
    continueAsNewDue({ continueAsNewSuggested, historyLength, historySize });

  it("waits past Temporal's default suggestion (4,096 events, 4 MiB) to its own floor, events or bytes", () => {
    expect(at(true, 4096, 4 * 1024 * 1024)).toBe(false);
    expect(at(true, CONTINUE_AS_NEW_EVENTS - 1, CONTINUE_AS_NEW_BYTES - 1)).toBe(false);
    expect(at(true, CONTINUE_AS_NEW_EVENTS, 1)).toBe(true);
    expect(at(true, 1, CONTINUE_AS_NEW_BYTES)).toBe(true);
  });

  it('never before Temporal suggests it, and under its warning levels (10,240 events, 10 MiB)', () => {
    expect(at(false, 40_000, 40 * 1024 * 1024)).toBe(false);
    expect(CONTINUE_AS_NEW_EVENTS).toBeLessThan(10 * 1024);
    expect(CONTINUE_AS_NEW_BYTES).toBeLessThan(10 * 1024 * 1024);
  });
});
