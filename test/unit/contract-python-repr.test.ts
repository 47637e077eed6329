import { describe, expect, it } from 'vitest';
import { pyFloatRepr, pyStrRepr, pythonRepr, pythonReprJson } from '../../src/contract/python-repr.js';

// Expected values are what CPython 3.12 prints for repr() of the same values.
describe('pythonRepr', () => {
  it('scalars', () => {
    expect(pythonRepr(null)).toBe('None');
    expect(pythonRepr(undefined)).toBe('None');
    expect(pythonRepr(true)).toBe('True');
    expect(pythonRepr(false)).toBe('False');
    expect(pythonRepr(3)).toBe('3');
    expect(pythonRepr(-0)).toBe('0');
    expect(pythonRepr(1.5)).toBe('1.5');
    expect(pythonRepr(12345678901234567890n)).toBe('12345678901234567890');
    expect(pythonRepr('rs_a')).toBe("'rs_a'");
  });

  it('lists and dicts', () => {
    expect(pythonRepr(['rs_a', 'rs_b'])).toBe("['rs_a', 'rs_b']");
    expect(pythonRepr([])).toBe('[]');
    expect(pythonRepr({ a: 1, b: [true, null], c: { d: 'x' } })).toBe("{'a': 1, 'b': [True, None], 'c': {'d': 'x'}}");
  });
});

describe('pyStrRepr', () => {
  it('chooses quotes like Python', () => {
    expect(pyStrRepr("it's")).toBe('"it\'s"');
    expect(pyStrRepr('say "hi"')).toBe('\'say "hi"\'');
    expect(pyStrRepr(`both ' and "`)).toBe(`'both \\' and "'`);
  });

  it('escapes like Python', () => {
    expect(pyStrRepr('a\\b')).toBe("'a\\\\b'");
    expect(pyStrRepr('\t\n\r')).toBe("'\\t\\n\\r'");
    expect(pyStrRepr('\x00\x1f\x7f')).toBe("'\\x00\\x1f\\x7f'");
    expect(pyStrRepr('\x85\xa0')).toBe("'\\x85\\xa0'");
    expect(pyStrRepr('\u200b\u2028')).toBe("'\\u200b\\u2028'");
    expect(pyStrRepr('\ud800')).toBe("'\\ud800'");
    expect(pyStrRepr('\u{e0001}')).toBe("'\\U000e0001'");
  });

  it('keeps printable non-ASCII text', () => {
    expect(pyStrRepr('é 日本 😀 —')).toBe("'é 日本 😀 —'");
  });
});

describe('pyFloatRepr', () => {
  it.each([
    [1, '1.0'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.1, '0.1'],
    [1.5, '1.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e+16'],
    [1.2345e16, '1.2345e+16'],
    [123456789.123, '123456789.123'],
    [0.7071067811865476, '0.7071067811865476'],
    [1e300, '1e+300'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('%s -> %s', (x, expected) => {
    expect(pyFloatRepr(x)).toBe(expected);
  });
});

describe('pythonReprJson (from raw text)', () => {
  it('keeps floats as floats and ints exact', () => {
    expect(pythonReprJson('{"reward":1.0,"n":12345678901234567890,"e":1E2,"neg":-0}')).toBe(
      "{'reward': 1.0, 'n': 12345678901234567890, 'e': 100.0, 'neg': 0}",
    );
  });

  it('prints a row as NeMo Gym would', () => {
    const raw = '{"response": {"output": [], "ok": true, "x": null}, "_ng_task_index": 3, "s": "it\'s"}';
    expect(pythonReprJson(raw)).toBe("{'response': {'output': [], 'ok': True, 'x': None}, '_ng_task_index': 3, 's': \"it's\"}");
  });

  it('duplicate keys: first position, last value (Python dict)', () => {
    expect(pythonReprJson('{"a":1,"b":2,"a":3}')).toBe("{'a': 3, 'b': 2}");
  });

  it('rejects invalid JSON', () => {
    expect(() => pythonReprJson('{"a":1')).toThrow(SyntaxError);
    expect(() => pythonReprJson('{"a":1} x')).toThrow(SyntaxError);
  });
});
