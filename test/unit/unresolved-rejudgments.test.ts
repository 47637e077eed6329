/** Re-judgments admitted (their batch scheduled) and not settled (its parts not committed), from history events. */
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { unresolvedLines, unsettledBatches } from '../../src/cli/unresolved-rejudgments.js';

type Events = Parameters<typeof unsettledBatches>[0];
const p = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });
let id = 0;
const scheduled = (type: string, input: unknown) => ({
  eventId: ++id,
  activityTaskScheduledEventAttributes: { activityType: { name: type }, input: p(input) },
});
const completed = (scheduledEventId: number) => ({ eventId: ++id, activityTaskCompletedEventAttributes: { scheduledEventId } });
const batch = (round: number, b: number, operation?: string) => ({
  round,
  batch: b,
  from: b * 10,
  to: b * 10 + 10,
  plan: { planPath: '/nowhere/plan.bin' },
  ...(operation ? { operation } : {}),
});

describe('unsettledBatches', () => {
  it('lists re-judgment batches scheduled and not committed; plain batches and committed ones are not listed', () => {
    const plain = scheduled('verifyBatch', batch(0, 0));
    const b0 = scheduled('verifyBatch', batch(1, 0, 'R/r2'));
    const b1 = scheduled('verifyBatch', batch(1, 1, 'R/r2'));
    const commit = scheduled('commitBatches', { mainParts: ['/w/r1-b0.main.part'] });
    const pendingCommit = scheduled('commitBatches', { mainParts: ['/w/r1-b1.main.part'] });
    // Ids as numbers, where the SDK has Longs (the code reads them with String()).
    const events = [plain, b0, b1, commit, completed(commit.eventId), pendingCommit] as unknown as Events;
    expect(unsettledBatches(events).map((u) => [u.round, u.batch, u.operation])).toEqual([[1, 1, 'R/r2']]);
    expect(unsettledBatches([...events, completed(pendingCommit.eventId)] as unknown as Events)).toEqual([]);
  });

  it('a --rejudge-saved batch (tag `saved`) is admitted apart from the rounds and settled by its settleSavedRows', () => {
    const round0 = scheduled('verifyBatch', batch(0, 0, 'R/r1'));
    const saved = scheduled('verifyBatch', { ...batch(0, 0, 'R/saved'), tag: 'saved' });
    const settle = scheduled('settleSavedRows', { output: '/o.jsonl', mainLength: 1, parts: ['/w/saved-b0.main.part'] });
    const events = [round0, saved, settle] as unknown as Events;
    expect(unsettledBatches(events).map((u) => u.operation)).toEqual(['R/r1', 'R/saved']);
    expect(unsettledBatches([...events, completed(settle.eventId)] as unknown as Events).map((u) => u.operation)).toEqual(['R/r1']);
  });

  it('status lines: none when all are settled; each by operation id, at most 20, then a count', () => {
    expect(unresolvedLines([])).toEqual([]);
    const many = Array.from({ length: 22 }, (_, i) => ({ operationId: `R/r2/${i}.0`, key: `${i}:0`, round: 1, batch: 0 }));
    const lines = unresolvedLines(many);
    expect(lines[0]).toMatch(/^Re-judgments admitted, not settled \(outcome unknown\): 22: /);
    expect(lines[1]).toBe('  R/r2/0.0 (key 0:0), round 2, batch 1');
    expect(lines.at(-1)).toBe('  and 2 more (reverify status --json lists them all)');
    expect(lines).toHaveLength(22);
    // --resume only once the run has ended: a live run settles them itself.
    expect(lines[0]).toMatch(/when a later round or --resume judges it again$/);
    expect(unresolvedLines(many, true)[0]).toMatch(/when its batch commits or when a later round judges it again$/);
  });
});
