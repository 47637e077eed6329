import { describe, expect, it } from 'vitest';
import { AggregateGroups, aggregationTargetOf, READ_BATCH_ROWS, readBatchEnd, type RowPlace } from '../../src/io/aggregate-metrics-file.js';

const place = (length: number, task = 0): RowPlace => ({ key: { task, rollout: 0 }, file: 0, offset: 0, length });

describe('aggregationTargetOf (spec §4.13 step 2)', () => {
  it('reads agent_ref.name and a string task_source', () => {
    expect(aggregationTargetOf({ agent_ref: { name: 'a', type: 'responses_api_agents' } })).toEqual({ agent: 'a', taskSource: undefined });
    expect(aggregationTargetOf({ agent_ref: { name: 'a' }, task_source: 'rs' })).toEqual({ agent: 'a', taskSource: 'rs' });
    expect(aggregationTargetOf({ agent_ref: { name: 'a' }, task_source: 3 })).toEqual({ agent: 'a', taskSource: undefined });
  });

  it('a row without a string agent name is skipped (null)', () => {
    expect(aggregationTargetOf({})).toBeNull();
    expect(aggregationTargetOf({ agent_ref: {} })).toBeNull();
    expect(aggregationTargetOf({ agent_ref: { name: 7 } })).toBeNull();
  });
});

describe('AggregateGroups', () => {
  it('groups by (agent, server) in first-seen order, rows in insertion order', () => {
    const g = new AggregateGroups();
    const [p1, p2, p3, p4] = [place(1, 1), place(1, 2), place(1, 3), place(1, 4)];
    g.add('b', 'rs1', p1);
    g.add('a', 'rs1', p2);
    g.add('b', 'rs1', p3);
    g.add('b', 'rs2', p4);
    expect(g.list()).toEqual([
      { agent: 'b', server: 'rs1', rows: [p1, p3] },
      { agent: 'a', server: 'rs1', rows: [p2] },
      { agent: 'b', server: 'rs2', rows: [p4] },
    ]);
  });
});

describe('readBatchEnd', () => {
  it('takes at most READ_BATCH_ROWS rows', () => {
    const rows = Array.from({ length: READ_BATCH_ROWS * 2 + 3 }, () => place(10));
    expect(readBatchEnd(rows, 0)).toBe(READ_BATCH_ROWS);
    expect(readBatchEnd(rows, READ_BATCH_ROWS * 2)).toBe(READ_BATCH_ROWS * 2 + 3);
    expect(readBatchEnd(rows, rows.length)).toBe(rows.length);
  });

  it('stops before maxBytes, but always takes one row', () => {
    const rows = [place(40), place(40), place(40), place(500), place(1)];
    expect(readBatchEnd(rows, 0, 100)).toBe(2);
    expect(readBatchEnd(rows, 2, 100)).toBe(3);
    expect(readBatchEnd(rows, 3, 100)).toBe(4); // one row larger than the limit
    expect(readBatchEnd(rows, 4, 100)).toBe(5);
  });
});
