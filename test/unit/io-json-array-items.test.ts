import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { jsonFileArrayItems } from '../../src/io/json-array-items.js';
import { jsonSpanMembers } from '../../src/io/json-file-members.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-json-array-items-');

describe('the elements of a JSON array in a file, by byte range', () => {
  it('finds each element (objects, arrays, strings with brackets, scalars), and the members of one', async () => {
    const path = tmp.unique('items-', '.json');
    const text = ' [ {"a": "]}", "b": [1, {"c": "\\" ["}]} ,[ ],"x,]",\n-1.5e3 , null,{"é":{}} ]\n';
    writeFileSync(path, text);
    const items = await jsonFileArrayItems(path);
    const bytes = Buffer.from(text);
    const at = (s: { start: number; end: number }) => bytes.subarray(s.start, s.end).toString();
    expect(items.map(at)).toEqual(['{"a": "]}", "b": [1, {"c": "\\" ["}]}', '[ ]', '"x,]"', '-1.5e3', 'null', '{"é":{}}']);
    const fh = await open(path, 'r');
    try {
      const members = await jsonSpanMembers(fh, items[0]);
      expect([...members.keys()]).toEqual(['a', 'b']);
      expect(at(members.get('b')!)).toBe('[1, {"c": "\\" ["}]');
    } finally {
      await fh.close();
    }
  });

  it('an empty array has no elements', async () => {
    const path = tmp.unique('empty-', '.json');
    writeFileSync(path, '[\n]');
    expect(await jsonFileArrayItems(path)).toEqual([]);
  });

  it.each([
    ['an object', '{"a": 1}', /not a JSON array at byte 0/],
    ['cut off', '[{"a": [1, 2', /unexpected end of data/],
    ['a string cut off', '[{"a": "abc', /unterminated string/],
    ['data after the array', '[1] x', /unexpected data after the JSON value/],
  ])('not one JSON array: %s', async (_label, text, message) => {
    const path = tmp.unique('bad-', '.json');
    writeFileSync(path, text);
    await expect(jsonFileArrayItems(path)).rejects.toThrow(message);
  });
});
