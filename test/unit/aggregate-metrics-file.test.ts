import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compareKeys, type RowKey } from '../../src/contract/row-key.js';
import { AggregateGroups } from '../../src/aggregation/aggregate-groups.js';
import { aggregationTargetOf, type RowPlace } from '../../src/aggregation/aggregate-metrics-file.js';
import { READ_BATCH_ROWS, readBatches } from '../../src/aggregation/row-reader.js';
import { readPlaceFile, type Place } from '../../src/aggregation/place-file.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-aggregate-groups-');

const place = (length: number, task = 0): RowPlace => ({ key: { task, rollout: 0 }, file: 0, offset: 0, length });

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* stream<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** Batch sizes `readBatches` makes of places of these lengths. */
async function batchSizes(lengths: number[], maxBytes?: number): Promise<number[]> {
  return (await collect(readBatches(stream(lengths.map((n) => place(n))), maxBytes))).map((b) => b.length);
}

describe('aggregationTargetOf (spec §4.13 step 2, NeMo Gym 0.7.0)', () => {
  it('reads agent_ref.name, a string task_source and a string environment-server stamp; the run key is the stamp, else the agent', () => {
    expect(aggregationTargetOf({ agent_ref: { name: 'a', type: 'responses_api_agents' } })).toEqual({ runKey: 'a', route: { agent: 'a' } });
    expect(aggregationTargetOf({ agent_ref: { name: 'a' }, task_source: 'rs' })).toEqual({
      runKey: 'a',
      route: { agent: 'a', taskSource: 'rs' },
    });
    expect(aggregationTargetOf({ agent_ref: { name: 'a' }, task_source: 3 })).toEqual({ runKey: 'a', route: { agent: 'a' } });
    expect(aggregationTargetOf({ agent_ref: { name: 'a' }, _ng_environment_server: 'env' })).toEqual({
      runKey: 'env',
      route: { agent: 'a', environmentServer: 'env' },
    });
    expect(aggregationTargetOf({ _ng_environment_server: 'env' })).toEqual({ runKey: 'env', route: { environmentServer: 'env' } });
  });

  it('a row with neither a string agent name nor a string environment-server stamp is skipped (null)', () => {
    expect(aggregationTargetOf({})).toBeNull();
    expect(aggregationTargetOf({ agent_ref: {} })).toBeNull();
    expect(aggregationTargetOf({ agent_ref: { name: 7 } })).toBeNull();
    expect(aggregationTargetOf({ agent_ref: {}, _ng_environment_server: 5 })).toBeNull();
  });
});

describe('AggregateGroups', () => {
  /** The groups and, per group, its places as read back from its place file. */
  async function sortedGroups(rows: Array<[string, string, RowPlace]>, maxRecords?: number) {
    const dir = tmp.freshDir();
    const g = new AggregateGroups({ dir, maxRecords });
    for (const [agent, server, p] of rows) await g.add({ runKey: agent, route: { agent } }, server, p);
    const groups = await g.sorted();
    const placesOf = await Promise.all(groups.map((s) => collect(readPlaceFile(s.placesPath))));
    return { dir, groups, placesOf };
  }

  const at = (offset: number): Place => ({ file: offset % 3, offset, length: 10 + offset });

  it('groups by (agent, server) in first-seen order, rows in insertion order for equal keys', async () => {
    const [p1, p2, p3, p4] = [1, 2, 3, 4].map((o) => ({ ...at(o), key: { task: 0, rollout: 0 } }));
    const { groups, placesOf } = await sortedGroups([
      ['b', 'rs1', p1],
      ['a', 'rs1', p2],
      ['b', 'rs1', p3],
      ['b', 'rs2', p4],
    ]);
    expect(groups.map(({ agent, server, rows }) => ({ agent, server, rows }))).toEqual([
      { agent: 'b', server: 'rs1', rows: 2 },
      { agent: 'a', server: 'rs1', rows: 1 },
      { agent: 'b', server: 'rs2', rows: 1 },
    ]);
    const strip = ({ file, offset, length }: Place) => ({ file, offset, length });
    expect(placesOf).toEqual([[strip(p1), strip(p3)], [strip(p2)], [strip(p4)]]);
  });

  it('sorts each group by key (stable), the same whether the sort spills to disk or not', async () => {
    const parts: RowKey['task'][] = [3, 1, 1.0, true, 'b', 'a', null, 2, 0, false, -1, 'é', 2 ** 60];
    const rows: Array<[string, string, RowPlace]> = Array.from({ length: 600 }, (_, i) => [
      `agent${i % 3}`,
      i % 5 === 0 ? 'rs2' : 'rs1',
      { ...at(i), key: { task: parts[(i * 7) % parts.length], rollout: parts[(i * 11) % parts.length] } },
    ]);
    const inMemory = await sortedGroups(rows);
    const spilled = await sortedGroups(rows, 7);
    expect(spilled.placesOf).toEqual(inMemory.placesOf);
    expect(spilled.groups.map((g) => g.rows)).toEqual(inMemory.groups.map((g) => g.rows));
    expect(readdirSync(spilled.dir).filter((f) => !f.endsWith('.places'))).toEqual([]); // run files removed
    // Expected: each group's rows in insertion order, stably sorted by key.
    const byGroup = new Map<string, RowPlace[]>();
    for (const [agent, server, p] of rows) byGroup.set(`${agent}/${server}`, [...(byGroup.get(`${agent}/${server}`) ?? []), p]);
    const expected = [...byGroup.values()].map((ps) =>
      [...ps].sort((a, b) => compareKeys(a.key, b.key)).map(({ file, offset, length }) => ({ file, offset, length })),
    );
    expect(spilled.placesOf).toEqual(expected);
  });
});

describe('AggregateGroups: groups as NeMo Gym 0.7.0 (run = environment-server stamp, else agent)', () => {
  const row = (key: number, route: { agent?: string; environmentServer?: string }) => ({
    runKey: route.environmentServer ?? route.agent!,
    route,
    place: { key: { task: key, rollout: 0 }, file: 0, offset: key, length: 1 },
  });

  it("groups by (run, server), named by the run labels; a run's agent is that of its first row in key order", async () => {
    const g = new AggregateGroups({ dir: tmp.freshDir() });
    const rows: Array<[ReturnType<typeof row>, string]> = [
      [row(0, { agent: 'agent_a' }), 'rs_a'],
      [row(1, { agent: 'agent_a', environmentServer: 'env_b' }), 'rs_b'],
      [row(2, { environmentServer: 'env_b' }), 'rs_a'],
      [row(3, { agent: 'agent_c', environmentServer: 'env_c' }), 'rs_c'],
      [row(9, { agent: 'agent_d', environmentServer: 'env_d' }), 'rs_c'],
      [row(4, { environmentServer: 'env_d' }), 'rs_c'],
    ];
    for (const [r, server] of rows) await g.add(r, server, r.place);
    const groups = await g.sorted();
    expect(groups.map(({ agent, server, rows }) => [agent, server, rows])).toEqual([
      // agent_a ran in two runs (its own and env_b): each is named by its key.
      ['agent_a', 'rs_a', 1],
      ['env_b', 'rs_b', 1],
      ['env_b', 'rs_a', 1],
      // env_c's only agent is agent_c: the run keeps the agent's name.
      ['agent_c', 'rs_c', 1],
      // env_d's first row in key order (task 4) names no agent: named by its key.
      ['env_d', 'rs_c', 2],
    ]);
  });
});

describe('readBatches', () => {
  it('takes at most READ_BATCH_ROWS rows', async () => {
    expect(await batchSizes(Array(READ_BATCH_ROWS * 2 + 3).fill(10))).toEqual([READ_BATCH_ROWS, READ_BATCH_ROWS, 3]);
    expect(await batchSizes([])).toEqual([]);
  });

  it('stops before maxBytes, but always takes one row', async () => {
    // 40+40 | 40 | 500 (one row larger than the limit) | 1
    expect(await batchSizes([40, 40, 40, 500, 1], 100)).toEqual([2, 1, 1, 1]);
  });
});
