import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemberNames, scanJsonObjectLine, SCAN_NO, SCAN_OK, smallIntAt } from '../../src/contract/json-line-scan.js';
import { chunkLine, jsonlLineChunks, jsonlLines, type JsonlLine } from '../../src/io/jsonl-lines.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const names = new MemberNames(['a', '_ng_task_index', 'response']);

/** What the scanner says of `text`, and what `JSON.parse` says. */
function both(text: string): { scan: number; parsed: unknown; ok: boolean; slots: Int32Array } {
  const b = Buffer.from(text, 'utf8');
  const slots = names.slots();
  const scan = scanJsonObjectLine(b, 0, b.length, names, slots);
  let parsed: unknown;
  let ok = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    ok = false;
  }
  return { scan, parsed, ok, slots };
}

/** The scanner never accepts what JSON.parse refuses, nor a non-object; its spans are the parsed members' values. */
function agrees(text: string): void {
  const { scan, parsed, ok, slots } = both(text);
  if (scan === SCAN_NO) return;
  expect(ok, text).toBe(true);
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), text).toBe(true);
  const b = Buffer.from(text, 'utf8');
  names.names.forEach((n, i) => {
    const value = (parsed as Record<string, unknown>)[n];
    if (slots[2 * i] < 0) expect(Object.hasOwn(parsed as object, n), text).toBe(false);
    else expect(JSON.parse(b.toString('utf8', slots[2 * i], slots[2 * i + 1]))).toEqual(value);
  });
}

describe('scanJsonObjectLine', () => {
  it('accepts JSON objects and finds members (the last of a repeated name)', () => {
    for (const t of [
      '{}',
      ' {"a":1} ',
      '{"a":[1,{"b":"x\\u00e9\\n"}],"_ng_task_index":-0.5e+3,"response":{},"a":true}',
      '{"x":null,"y":false,"z":"é","response":{"k":[[],[{}]]}}',
      '{"a" : 0 , "b":[ 1 , 2 ]}\t',
    ]) {
      expect(both(t).scan, t).not.toBe(SCAN_NO);
      agrees(t);
    }
  });

  it('refuses what JSON.parse refuses, and non-objects', () => {
    for (const t of [
      '',
      ' ',
      '[]',
      '1',
      '"a"',
      '{',
      '{"a":1,}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":-}',
      '{"a":1e}',
      '{"a":tru}',
      '{"a":"\t"}',
      '{"a":"\\x"}',
      '{"a":"\\u12g4"}',
      '{"a" 1}',
      '{a:1}',
      '{"a":1}x',
      '{"a":[1,]}',
      '{"a":{"b":1,}}',
      '{"a":[1}',
      '\ufeff{"a":1}',
      '{"a":1}\u00a0',
      "{'a':1}",
      '{"a":NaN}',
    ]) {
      expect(both(t).scan, t).toBe(SCAN_NO);
    }
  });

  it('accepts the JSON objects JSON.stringify writes (property)', () => {
    fc.assert(
      fc.property(fc.object(), (o) => {
        const t = JSON.stringify(o);
        if (Object.keys(o).some((k) => JSON.stringify(k) !== `"${k}"`)) return; // an escaped top-level key: left to JSON.parse
        expect(both(t).scan, t).not.toBe(SCAN_NO);
        agrees(t);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves a top-level key with an escape to the full parser', () => {
    expect(both('{"\\u0061":1}').scan).toBe(SCAN_NO);
  });

  it('never accepts a line JSON.parse refuses (property)', () => {
    fc.assert(
      fc.property(fc.json(), (t) => agrees(t)),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (t) => agrees(t)),
      { numRuns: 2000 },
    );
    const pieces = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      '"',
      ':',
      ',',
      ' ',
      '\\',
      'a',
      '1',
      '-',
      '.',
      'e',
      'true',
      'null',
      '"a"',
      '\\u00',
      '\n',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (p) => agrees(p.join(''))),
      { numRuns: 5000 },
    );
    // Mutations of valid objects: one byte changed, removed or doubled.
    fc.assert(
      fc.property(fc.object(), fc.nat(), fc.integer({ min: 0, max: 127 }), fc.nat(2), (o, at, c, op) => {
        const t = JSON.stringify({ a: o });
        const i = at % (t.length + 1);
        const ch = String.fromCharCode(c);
        const m =
          op === 0 ? t.slice(0, i) + ch + t.slice(i + 1) : op === 1 ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + t[i] + t.slice(i);
        agrees(m);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('smallIntAt', () => {
  it('reads plain integers of up to 15 digits, else -1', () => {
    const at = (t: string) => smallIntAt(Buffer.from(t), 0, t.length);
    expect(at('0')).toBe(0);
    expect(at('123456789012345')).toBe(123456789012345);
    for (const t of ['', '-1', '01', '1.0', '1e2', '1234567890123456', ' 1']) expect(at(t), t).toBe(-1);
  });
});

const tmp = useTempRoot('reverify-json-line-scan-');

describe('jsonlLineChunks', () => {
  it('gives the lines jsonlLines gives', async () => {
    const long = 'x'.repeat(5 << 20);
    for (const content of ['', 'a', 'a\n', 'a\r\nb\r', '\n\n', `{"a":1}\r\n${long}\n\u00e9\n\xff`, `${long}`, `a\n${long}\nb`]) {
      const p = tmp.unique('f', '.jsonl');
      writeFileSync(p, content);
      const want: JsonlLine[] = [];
      for await (const l of jsonlLines(p, 0, { digests: true })) want.push(l);
      const got: JsonlLine[] = [];
      for await (const c of jsonlLineChunks(p)) for (let k = 0; k < c.count; k++) got.push(chunkLine(c, k, true));
      expect(got.length).toBe(want.length);
      got.forEach((g, i) => expect(g).toEqual(want[i]));
    }
  });
});

describe('scanJsonObjectLine four bytes at a time', () => {
  it('agrees with JSON.parse on strings with a special byte at every offset and alignment', () => {
    const specials = [
      '"',
      '\\',
      '\\"',
      '\\\\',
      '\\n',
      '\\u00e9',
      '\t',
      '\u0001',
      '\u001f',
      ' ',
      '~',
      '\u00e9',
      '\u20ac',
      '\u{1f600}',
      '\\x',
    ];
    const big = Buffer.alloc(1 << 12); // its own memory: byteOffset 0, so the word view is used
    expect(big.byteOffset % 4).toBe(0);
    for (const sp of specials)
      for (let len = 0; len < 12; len++)
        for (let at = 0; at <= len; at++) {
          const body = 'abcdefghijkl'.slice(0, at) + sp + 'mnopqrstuvwx'.slice(0, len - at);
          const text = `{"a":"${body}","_ng_task_index":1}`;
          const line = Buffer.from(text);
          for (let shift = 0; shift < 4; shift++) {
            line.copy(big, shift);
            const slots = names.slots();
            const scan = scanJsonObjectLine(big, shift, shift + line.length, names, slots);
            let ok = true;
            try {
              JSON.parse(text);
            } catch {
              ok = false;
            }
            expect(scan !== SCAN_NO, `${JSON.stringify(text)} at ${shift}`).toBe(ok);
            if (ok) expect(JSON.parse(big.toString('utf8', slots[0], slots[1]))).toBe((JSON.parse(text) as { a: string }).a);
            // The line as a buffer of its own that starts `shift` bytes past an aligned address (a row cut out of a read).
            const view = big.subarray(shift, shift + line.length);
            const viewSlots = names.slots();
            expect(scanJsonObjectLine(view, 0, view.length, names, viewSlots) !== SCAN_NO, `${JSON.stringify(text)} from ${shift}`).toBe(
              ok,
            );
            if (ok) expect(Array.from(viewSlots)).toEqual(Array.from(slots).map((x) => (x < 0 ? x : x - shift)));
          }
        }
  });

  it('scans a line in a buffer too big to keep its word view, and the next buffer too', () => {
    const text = `{"a":"${'x'.repeat(9 << 20)}","_ng_task_index":7}`;
    const big = Buffer.alloc(text.length + 8);
    big.write(text, 3);
    const slots = names.slots();
    expect(scanJsonObjectLine(big, 3, 3 + text.length, names, slots)).toBe(SCAN_OK);
    expect(big.toString('utf8', slots[2], slots[3])).toBe('7');
    big[100] = 0x0a; // a raw newline inside the string
    expect(scanJsonObjectLine(big, 3, 3 + text.length, names, slots)).toBe(SCAN_NO);
    const small = Buffer.from('{"a":"\\u0041\\t","_ng_task_index":8}');
    expect(scanJsonObjectLine(small, 0, small.length, names, slots)).toBe(SCAN_OK);
  });
});
