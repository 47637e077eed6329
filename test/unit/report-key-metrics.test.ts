import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jsonFileArrayMembers } from '../../src/io/json-array-members.js';
import { keyMetricsOf } from '../../src/report/run-files.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-report-key-metrics-');

describe("the report's key metrics", () => {
  it('reads a metrics file holding NaN (written before non-finite numbers became null) as null, instead of failing the report', async () => {
    const path = tmp.unique('metrics-', '.json');
    writeFileSync(
      path,
      '[\n  {\n    "agent_ref": {\n      "name": "a"\n    },\n    "key_metrics": {\n      "mean/reward": NaN,\n      "n": 2\n    }\n  }\n]',
    );
    expect(await keyMetricsOf(path)).toEqual({ a: { 'mean/reward': null, n: 2 } });
  });

  it('a metrics file that is not JSON at all leaves the key metrics out; the report is still made', async () => {
    const path = tmp.unique('metrics-', '.json');
    writeFileSync(path, '[{"agent_ref": {"name": "a"}, "key_metrics": {');
    expect(await keyMetricsOf(path)).toEqual({});
  });
});

describe('the key metrics read from the metrics file in one streaming pass (json-array-members.ts)', () => {
  /** Entries as the metrics file holds them: per-task group metrics with strings full of brackets, then key metrics. */
  const entries = [
    {
      agent_ref: { name: 'a "quoted" {agent}' },
      agent_metrics: { 'mean/reward': 0.5 },
      key_metrics: { 'mean/reward': 0.5, 'median/reward': 1 },
      group_level_metrics: Array.from({ length: 3000 }, (_, t) => ({ _ng_task_index: t, note: `]}{["\\${t}`, 'mean/reward': t % 2 })),
      repeat_level_metrics: [],
    },
    { agent_ref: { name: 'b' }, key_metrics: { 'max/reward': 1 }, group_level_metrics: [] },
    { agent_ref: { name: 'c' } },
    {},
  ];

  it.each([0, 2, '\t'])('gives what parsing the whole file gives, whatever its whitespace (indent %j)', async (indent) => {
    const path = tmp.unique('metrics-', '.json');
    writeFileSync(path, JSON.stringify(entries, null, indent) + '\n');
    expect(await keyMetricsOf(path)).toEqual({
      'a "quoted" {agent}': { 'mean/reward': 0.5, 'median/reward': 1 },
      b: { 'max/reward': 1 },
      c: {},
    });
  });

  it('finds each object of an array and the byte span of each member', async () => {
    const path = tmp.unique('array-', '.json');
    const text = ' [ {"k": [1, {"x": "]"}], "s": "a\\"}"} ,{}, {"n" : 12 } ] \n';
    writeFileSync(path, text);
    const objects = await jsonFileArrayMembers(path);
    const slice = (o: number, k: string) => text.slice(objects[o].get(k)!.start, objects[o].get(k)!.end);
    expect(objects.map((o) => [...o.keys()])).toEqual([['k', 's'], [], ['n']]);
    expect([slice(0, 'k'), slice(0, 's'), slice(2, 'n')]).toEqual(['[1, {"x": "]"}]', '"a\\"}"', '12']);
  });

  it.each([
    ['an object, not an array', '{"a": 1}', /not a JSON array/],
    ['an element that is not an object', '[{"a": 1}, 2]', /not an object/],
    ['a cut file', '[{"a": 1}, {"b": [', /end of data/],
    ['data after the array', '[{"a": 1}] x', /after the JSON value/],
    ['a missing comma', '[{"a": 1} {"b": 2}]', /expected ','/],
  ])('refuses %s with the byte where it breaks', async (_, text, why) => {
    const path = tmp.unique('array-', '.json');
    writeFileSync(path, text);
    await expect(jsonFileArrayMembers(path)).rejects.toThrow(why);
    expect(await keyMetricsOf(path)).toEqual({});
  });
});
