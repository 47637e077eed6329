import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

  it("reads each entry's agent_ref and key_metrics and steps over the rest, whatever it holds", async () => {
    const path = tmp.unique('metrics-', '.json');
    const groups = Array.from({ length: 2000 }, (_, i) => ({ task: i, note: 'a "quoted" ] } [ { \\ text', reward: i % 2 }));
    const entry = (name: string, key: Record<string, unknown>) => ({
      agent_ref: { name },
      agent_metrics: { 'mean/reward': 0.5 },
      key_metrics: key,
      group_level_metrics: groups,
      repeat_level_metrics: [],
    });
    writeFileSync(path, JSON.stringify([entry('a', { 'mean/reward': 0.5 }), { key_metrics: { x: 1 } }, 7, entry('b', {})], null, 2));
    expect(await keyMetricsOf(path)).toEqual({ a: { 'mean/reward': 0.5 }, b: {} });
  });

  it('no metrics file (null path) or a missing one: no key metrics', async () => {
    expect(await keyMetricsOf(null)).toEqual({});
    expect(await keyMetricsOf(tmp.unique('missing-', '.json'))).toEqual({});
  });
});
