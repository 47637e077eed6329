import { describe, expect, it } from 'vitest';
import { historyTimeline, timelineResult, type RecordedBatch } from '../../src/report/history-timeline.js';
import { recordedBatch } from '../helpers/recorded-batch.js';

const batch = recordedBatch;

describe('what the report keeps of each batch result it reads from the history', () => {
  it('keeps of a batch result only what the timeline reads: the same timeline, without per-agent counts, paired units or audit', () => {
    const full = (b: RecordedBatch) => ({
      ...b,
      result: {
        ...b.result,
        batch: 3,
        mainPart: 'part',
        perAgent: { a: { main: 1 } },
        paired: { agents: ['a'], units: [[0, 1, 1, 1, 0, 1, 0, 0, 0]] },
        audit: { rows: ['r'] },
      },
    });
    const batches = [
      batch(0, 0, 2, 8, 2),
      {
        ...batch(0, 1, 3, 20, 0),
        result: { ...batch(0, 1, 3, 20, 0).result, held: true, sofar: { main: 5, failed: 0, dropped: 0 }, carried: 1 },
      },
    ];
    const kept = batches.map((b) => ({ ...b, result: timelineResult(full(b).result as RecordedBatch['result']) }));
    expect(kept.map((b) => b.result)).toEqual(batches.map((b) => b.result));
    expect(historyTimeline(kept)).toEqual(historyTimeline(batches));
  });
});
