import { describe, expect, it } from 'vitest';
import { aggregateFailureKind } from '../../src/verifier/errors.js';

describe('aggregateFailureKind: what an /aggregate_metrics failure says about retrying it', () => {
  it('a 2xx that is not the expected reply, a 3xx, a 4xx other than 408/429: rejected (retrying cannot change it)', () => {
    for (const status of [200, 201, 301, 400, 401, 404, 411, 413, 422])
      expect(aggregateFailureKind(status), String(status)).toBe('rejected');
  });

  it('408, 429, 503: busy (an outage, waited out)', () => {
    for (const status of [408, 429, 503]) expect(aggregateFailureKind(status), String(status)).toBe('busy');
  });

  it('no answer and the other 5xx: unclear (down, or failing on these rows: the server is asked whether it answers at all)', () => {
    for (const status of [undefined, 500, 501, 502, 504]) expect(aggregateFailureKind(status), String(status)).toBe('unclear');
  });
});
