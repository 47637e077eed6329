import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oneLineJson } from '../../src/contract/one-line-json.js';

describe('oneLineJson', () => {
  it('keeps a one-line text as it is, trimmed', () => {
    const line = '{"reward": 1.0, "n": 12345678901234567890123, "s": "a  b"}';
    expect(oneLineJson(line)).toBe(line);
    expect(oneLineJson(`  ${line}\n`)).toBe(line);
  });

  it('an indented text becomes the compact text of the same value (numbers and strings as written)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(1, 2, '\t', ' \r'), (value, indent) => {
        const pretty = JSON.stringify(value, null, indent);
        const compact = JSON.stringify(value);
        expect(oneLineJson(pretty.includes('\n') ? pretty : `${pretty}\n`)).toBe(compact);
      }),
      { numRuns: 300 },
    );
  });

  it('whitespace inside strings stays, escaped quotes and backslashes too', () => {
    expect(oneLineJson('{\n "a b": "x \\\\",\n "c": "\\" \\n y"\n}')).toBe('{"a b":"x \\\\","c":"\\" \\n y"}');
    expect(oneLineJson('{\r\n  "big": 1.50e+300\r\n}')).toBe('{"big":1.50e+300}');
  });
});
