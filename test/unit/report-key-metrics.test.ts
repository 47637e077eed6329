import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keyMetricsOf } from '../../src/report/run-files.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-report-key-metrics-');

describe("the report's key metrics", () => {
  it('reads a metrics file holding NaN (written before non-finite numbers became null) as null, instead of failing the report', () => {
    const path = tmp.unique('metrics-', '.json');
    writeFileSync(
      path,
      '[\n  {\n    "agent_ref": {\n      "name": "a"\n    },\n    "key_metrics": {\n      "mean/reward": NaN,\n      "n": 2\n    }\n  }\n]',
    );
    expect(keyMetricsOf(path)).toEqual({ a: { 'mean/reward': null, n: 2 } });
  });

  it('a metrics file that is not JSON at all leaves the key metrics out; the report is still made', () => {
    const path = tmp.unique('metrics-', '.json');
    writeFileSync(path, '[{"agent_ref": {"name": "a"}, "key_metrics": {');
    expect(keyMetricsOf(path)).toEqual({});
  });
});
