import { describe, expect, it } from 'vitest';
import { maxRolloutAttempts, parsePythonInt } from '../../src/contract/attempts.js';

const env = (v: string | undefined) => ({ NEMO_GYM_MAX_ROLLOUT_ATTEMPTS: v });

describe('Python int() parsing', () => {
  it.each([
    ['5', 5],
    [' 5 ', 5],
    ['+5', 5],
    ['-5', -5],
    ['007', 7],
    ['1_000', 1000],
    ['\t12\n', 12],
    ['\u00a05\u3000', 5],
    ['-0', 0],
  ])('accepts %j -> %d', (text, n) => {
    expect(parsePythonInt(text)).toBe(n);
  });

  it.each(['5.0', '1e3', '', '   ', 'five', '0x10', '_1', '1_', '1__0', '+ 5', '5 5', '\ufeff5'])('rejects %j', (text) => {
    expect(parsePythonInt(text)).toBeNull();
  });
});

describe('NEMO_GYM_MAX_ROLLOUT_ATTEMPTS', () => {
  it('unset or empty -> 3, no warning', () => {
    expect(maxRolloutAttempts({})).toEqual({ value: 3 });
    expect(maxRolloutAttempts(env(''))).toEqual({ value: 3 });
  });

  it('" 5 " and "+5" are accepted', () => {
    expect(maxRolloutAttempts(env(' 5 '))).toEqual({ value: 5 });
    expect(maxRolloutAttempts(env('+5'))).toEqual({ value: 5 });
    expect(maxRolloutAttempts(env('1'))).toEqual({ value: 1 });
  });

  it('"5.0" is rejected with the Python ValueError text', () => {
    expect(maxRolloutAttempts(env('5.0'))).toEqual({
      value: 3,
      warning:
        "WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS='5.0' (invalid literal for int() with base 10: '5.0'); falling back to default 3.",
    });
  });

  it('0 and negatives -> warning + 3', () => {
    expect(maxRolloutAttempts(env('0'))).toEqual({
      value: 3,
      warning: "WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS='0' (must be >= 1, got 0); falling back to default 3.",
    });
    expect(maxRolloutAttempts(env('-2')).warning).toContain('(must be >= 1, got -2)');
  });

  it('whitespace-only -> warning quoting the raw value', () => {
    expect(maxRolloutAttempts(env('  ')).warning).toBe(
      "WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS='  ' (invalid literal for int() with base 10: '  '); falling back to default 3.",
    );
  });
});
