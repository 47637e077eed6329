import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { int } from '../../src/cli/run-flag-options.js';

describe('integer flags', () => {
  it('take whole numbers up to Number.MAX_SAFE_INTEGER', () => {
    expect(int('--max-requests')('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(int('--max-requests')(' 12 ')).toBe(12);
  });

  it('refuse a larger one as written, not rounded', () => {
    const parse = () => int('--max-requests')('9007199254740993');
    expect(parse).toThrow(InvalidArgumentError);
    expect(parse).toThrow('--max-requests is too large (got 9007199254740993; at most 9007199254740991)');
  });
});
