/**
 * The cached workflow bundle's inline source map (src/temporal/workflow-bundle.ts): empty, naming
 * the bundle's own path, and accepted by the SDK as it is.
 */
import { parseWorkflowCode } from '@temporalio/worker/lib/worker.js';
import { describe, expect, it } from 'vitest';
import { withEmptySourceMap } from '../../src/temporal/workflow-bundle.js';

const CODE = 'var x = 1;\nfunction f() { return x; }\n';
const bigMap = {
  version: 3,
  file: 'workflow-bundle-abc.js',
  sources: ['webpack://./workflows/a.ts'],
  sourcesContent: ['export const x = 1;'.repeat(1000)],
  names: [],
  mappings: 'AAAA;AACA',
};
const webpackBundle = `${CODE}//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(bigMap)).toString('base64')}`;

describe('withEmptySourceMap', () => {
  const path = '/state/bundles/workflows-0123.js';

  it('keeps the code and replaces the map by an empty one naming the bundle', () => {
    const slim = withEmptySourceMap(webpackBundle, path);
    expect(slim.startsWith(CODE)).toBe(true);
    const b64 = slim.slice(slim.indexOf('base64,') + 'base64,'.length).trim();
    expect(JSON.parse(Buffer.from(b64, 'base64').toString('utf8'))).toEqual({
      version: 3,
      file: path,
      sources: [],
      names: [],
      mappings: '',
    });
    expect(slim.length).toBeLessThan(webpackBundle.length / 10);
  });

  it('is taken by the SDK as it is, with an empty map', () => {
    const slim = withEmptySourceMap(webpackBundle, path);
    const parsed = parseWorkflowCode(slim, path);
    expect(parsed.filename).toBe(path);
    expect(parsed.code).toBe(slim);
    expect(parsed.sourceMap).toMatchObject({ sources: [], mappings: '' });
  });

  it('refuses a bundle without an inline map', () => {
    expect(() => withEmptySourceMap(CODE, path)).toThrow(/no inline source map/);
  });
});
