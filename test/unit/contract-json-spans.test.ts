import { describe, expect, it } from 'vitest';
import { rawField, scanObject, setFields, topLevelSpans } from '../../src/contract/json-spans.js';

function spansAsText(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, s] of topLevelSpans(text)) out[k] = text.slice(s.start, s.end);
  return out;
}

describe('topLevelSpans', () => {
  it('gives the raw text of every top-level value', () => {
    const text = '{"a":1,"b":"x","c":{"d":[1,2,{"e":null}]},"f":[],"g":true,"h":-1.5e+3,"i":false,"j":null}';
    expect(spansAsText(text)).toEqual({
      a: '1',
      b: '"x"',
      c: '{"d":[1,2,{"e":null}]}',
      f: '[]',
      g: 'true',
      h: '-1.5e+3',
      i: 'false',
      j: 'null',
    });
  });

  it('handles {} and whitespace everywhere', () => {
    expect(topLevelSpans('{}').size).toBe(0);
    expect(topLevelSpans(' \t{ \n } \r\n').size).toBe(0);
    expect(spansAsText('  { "a" :  [ 1 , 2 ] ,\n "b"\t:\t{ } }\n')).toEqual({ a: '[ 1 , 2 ]', b: '{ }' });
  });

  it('skips escaped quotes and backslashes inside strings', () => {
    const text = String.raw`{"a":"say \"hi\" \\","b":"\\","c":"\\\"","d":1}`;
    expect(spansAsText(text)).toEqual({
      a: String.raw`"say \"hi\" \\"`,
      b: String.raw`"\\"`,
      c: String.raw`"\\\""`,
      d: '1',
    });
  });

  it('ignores braces, brackets, commas and colons inside nested strings', () => {
    const text = '{"a":{"t":"}]{[,:\\"}"},"b":["]","}",{"x":"{"}],"c":2}';
    expect(spansAsText(text)).toEqual({ a: '{"t":"}]{[,:\\"}"}', b: '["]","}",{"x":"{"}]', c: '2' });
  });

  it('decodes escaped keys and keeps unicode text intact', () => {
    const text = '{"k\\u00e9y":"é😀","\\"q\\"":1,"日本":"語"}';
    const spans = topLevelSpans(text);
    expect([...spans.keys()]).toEqual(['kéy', '"q"', '日本']);
    expect(rawField(text, 'kéy')).toBe('"é😀"');
    expect(rawField(text, '日本')).toBe('"語"');
  });

  it('duplicate keys: the last value wins, first position kept (orjson)', () => {
    const text = '{"a":1,"b":2,"a":3}';
    const spans = topLevelSpans(text);
    expect([...spans.keys()]).toEqual(['a', 'b']);
    expect(rawField(text, 'a')).toBe('3');
    expect(scanObject(text).members.map((m) => m.key)).toEqual(['a', 'b', 'a']);
  });

  it('keeps big integers as raw text', () => {
    expect(rawField('{"n":12345678901234567890}', 'n')).toBe('12345678901234567890');
  });

  it.each([
    ['', "expected '{'"],
    ['[1,2]', "expected '{'"],
    ['"x"', "expected '{'"],
    ['{"a":1', "expected ',' or '}'"],
    ['{"a":1}{"b":2}', 'unexpected text after the object'],
    ['{"a":1} x', 'unexpected text after the object'],
    ['{"a" 1}', "expected ':'"],
    ['{a:1}', 'expected a string key'],
    ['{"a":}', 'invalid value'],
    ['{"a":tru}', 'invalid value'],
    ['{"a":01}', 'invalid value'],
    ['{"a":NaN}', 'invalid value'],
    ['{"a":"x}', 'unterminated string'],
    ['{"a":{"b":[1,2}}', 'mismatched bracket'],
    ['{"a":[1,2', 'unterminated object or array'],
    ['{"a":1,}', 'expected a string key'],
  ])('rejects %j (%s)', (text, reason) => {
    expect(() => topLevelSpans(text)).toThrow(SyntaxError);
    expect(() => topLevelSpans(text)).toThrow(reason);
  });

  it('finds the spans of a 50 KB row full of quotes, braces and backslashes inside strings', () => {
    const output = Array.from({ length: 40 }, (_, i) => ({
      type: 'message',
      id: `msg_${i}`,
      content: [{ type: 'output_text', text: 'Lorem "ipsum" {dolor} [sit] amet \\ '.repeat(35) }],
    }));
    const row = JSON.stringify({ response: { output }, _ng_task_index: 1 });
    expect(row.length).toBeGreaterThan(50_000);
    // (Its speed is the plan's, measured by bench/scale.ts, not asserted here.)
    expect(spansAsText(row)).toEqual({ response: JSON.stringify({ output }), _ng_task_index: '1' });
  });
});

describe('setFields', () => {
  it('replaces an existing key in place, keeping all other text byte for byte', () => {
    const text = '{"a": 1, "b": {"x": 1.0}, "c": 3}';
    expect(setFields(text, [['b', '"new"']])).toBe('{"a": 1, "b": "new", "c": 3}');
  });

  it('appends a new key at the end, compact', () => {
    expect(setFields('{"a":1}', [['b', '[1,2]']])).toBe('{"a":1,"b":[1,2]}');
    expect(setFields('{ "a" : 1 }\n', [['b', '2']])).toBe('{ "a" : 1,"b":2 }\n');
  });

  it('handles {} and whitespace-only objects', () => {
    expect(setFields('{}', [['a', '1']])).toBe('{"a":1}');
    expect(
      setFields('{ }', [
        ['a', '1'],
        ['b', '2'],
      ]),
    ).toBe('{"a":1,"b":2 }');
  });

  it('removes keys (first, middle, last, all)', () => {
    const text = '{"a":1,"b":2,"c":3}';
    expect(setFields(text, [], ['a'])).toBe('{"b":2,"c":3}');
    expect(setFields(text, [], ['b'])).toBe('{"a":1,"c":3}');
    expect(setFields(text, [], ['c'])).toBe('{"a":1,"b":2}');
    expect(setFields(text, [], ['a', 'b', 'c'])).toBe('{}');
    expect(setFields(text, [], ['zzz'])).toBe(text);
    expect(setFields('{ "a" : 1 , "b" : 2 }', [], ['a'])).toBe('{ "b" : 2 }');
  });

  it('removes every occurrence of a duplicated key', () => {
    expect(setFields('{"a":1,"b":2,"a":3}', [], ['a'])).toBe('{"b":2}');
  });

  it('assigning a duplicated key replaces the occurrence readers keep (the last)', () => {
    const out = setFields('{"a":1,"b":2,"a":3}', [['a', '9']]);
    expect(out).toBe('{"a":1,"b":2,"a":9}');
    expect(JSON.parse(out)).toEqual({ a: 9, b: 2 });
  });

  it('a key both removed and assigned moves to the end (Python: del d[k]; d[k] = v)', () => {
    expect(setFields('{"a":1,"b":2}', [['a', '5']], ['a'])).toBe('{"b":2,"a":5}');
  });

  it('a key assigned twice takes the later value at the first position', () => {
    expect(
      setFields('{"x":0}', [
        ['a', '1'],
        ['b', '2'],
        ['a', '3'],
      ]),
    ).toBe('{"x":0,"a":3,"b":2}');
  });

  it('returns the text unchanged when there is nothing to do', () => {
    const text = ' {"a": 1} ';
    expect(setFields(text, [])).toBe(text);
  });

  it('escapes new keys as JSON', () => {
    expect(setFields('{}', [['a"b', '1']])).toBe('{"a\\"b":1}');
  });

  it('leaves big integers and float spellings elsewhere untouched', () => {
    const text = '{"big":12345678901234567890,"f":1.0,"e":1E+2,"s":"x"}';
    expect(setFields(text, [['s', '"y"']])).toBe('{"big":12345678901234567890,"f":1.0,"e":1E+2,"s":"y"}');
  });

  it('throws SyntaxError for a text that is not one object', () => {
    expect(() => setFields('[]', [['a', '1']])).toThrow(SyntaxError);
  });
});
