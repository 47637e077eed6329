import { isUtf8 } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isBlank, jsonlLines, type JsonlLine } from '../../src/io/jsonl-lines.js';
import { lineDigest } from '../../src/io/line-digest.js';
import { tempDir, useTempRoot } from '../helpers/temp-dirs.js';

const MiB = 1 << 20;

const tmp = useTempRoot('reverify-jsonl-lines-');

function file(content: string | Buffer): string {
  const p = tmp.unique('f', '.jsonl');
  writeFileSync(p, content);
  return p;
}

/**
 * The lines of a file. `rawLength` (the bytes up to the `\n`, a `\r` included), `utf8` and `digest`
 * are checked here against the file, for every line of every test, then left out of the compared objects.
 */
async function collect(path: string, startOffset?: number): Promise<Array<Omit<JsonlLine, 'rawLength' | 'utf8' | 'digest'>>> {
  const out: Array<Omit<JsonlLine, 'rawLength' | 'utf8' | 'digest'>> = [];
  const bytes = readFileSync(path);
  for await (const line of jsonlLines(path, startOffset, { digests: true })) {
    const { rawLength, utf8, digest, ...rest } = line;
    expect(utf8).toBe(isUtf8(bytes.subarray(line.offset, line.offset + line.length)));
    expect(digest).toBe(lineDigest(bytes.subarray(line.offset, line.offset + line.length)));
    const raw = bytes.subarray(line.offset, line.offset + rawLength).toString('utf8');
    expect(raw === line.text || (line.terminated && raw === line.text + '\r')).toBe(true);
    if (line.terminated) expect(bytes[line.offset + rawLength]).toBe(10);
    out.push(rest);
  }
  return out;
}

/** The bytes `[offset, offset + length)` of the file, decoded: must give back the line's text. */
function bytesAt(path: string, line: Omit<JsonlLine, 'rawLength' | 'utf8' | 'digest'>): string {
  return readFileSync(path)
    .subarray(line.offset, line.offset + line.length)
    .toString('utf8');
}

/** An independent model of the expected lines of a file (LF-terminated only, no CR handling). */
function modelLines(content: string, startOffset = 0): Array<Omit<JsonlLine, 'rawLength' | 'utf8' | 'digest'>> {
  const buf = Buffer.from(content, 'utf8');
  const out: Array<Omit<JsonlLine, 'rawLength' | 'utf8' | 'digest'>> = [];
  let start = startOffset;
  let lineNo = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(10, start);
    const end = nl < 0 ? buf.length : nl;
    lineNo++;
    out.push({ text: buf.toString('utf8', start, end), lineNo, offset: start, length: end - start, terminated: nl >= 0 });
    if (nl < 0) break;
    start = nl + 1;
  }
  return out;
}

describe('jsonlLines', () => {
  it('empty file: no lines', async () => {
    expect(await collect(file(''))).toEqual([]);
  });

  it('plain ASCII lines: exact offsets, lengths, line numbers; no extra line after the final \\n', async () => {
    const p = file('{"a":1}\n{"b":22}\n');
    expect(await collect(p)).toEqual([
      { text: '{"a":1}', lineNo: 1, offset: 0, length: 7, terminated: true },
      { text: '{"b":22}', lineNo: 2, offset: 8, length: 8, terminated: true },
    ]);
  });

  it('multi-byte UTF-8: offsets and lengths are bytes, not UTF-16 units', async () => {
    const l1 = '{"t":"héllo wörld"}'; // 2 two-byte chars
    const l2 = '{"t":"日本語"}'; // 3 three-byte chars
    const l3 = '{"t":"😀🎉 ok"}'; // 2 four-byte chars (surrogate pairs in JS)
    const p = file(`${l1}\n${l2}\n${l3}\n`);
    const lines = await collect(p);
    const b1 = Buffer.byteLength(l1);
    const b2 = Buffer.byteLength(l2);
    const b3 = Buffer.byteLength(l3);
    expect([b1, b2, b3]).toEqual([l1.length + 2, l2.length + 6, l3.length + 4]);
    expect(lines).toEqual([
      { text: l1, lineNo: 1, offset: 0, length: b1, terminated: true },
      { text: l2, lineNo: 2, offset: b1 + 1, length: b2, terminated: true },
      { text: l3, lineNo: 3, offset: b1 + 1 + b2 + 1, length: b3, terminated: true },
    ]);
    for (const line of lines) expect(bytesAt(p, line)).toBe(line.text);
  });

  it('CRLF lines: the text has no \\r, offsets of following lines are exact', async () => {
    const p = file('{"a":1}\r\n{"bé":2}\r\n\r\n{"c":3}\n');
    const lines = await collect(p);
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', '{"bé":2}', '', '{"c":3}']);
    expect(lines.map((l) => l.offset)).toEqual([0, 9, 9 + Buffer.byteLength('{"bé":2}') + 2, 9 + 11 + 2]);
    expect(lines.map((l) => l.lineNo)).toEqual([1, 2, 3, 4]);
    expect(lines.every((l) => l.terminated)).toBe(true);
  });

  it('CRLF lines: `length` excludes the terminator, so reading length bytes at offset gives the text', async () => {
    // JsonlLine.length is documented as "Byte length of the line without its terminator", and the
    // text drops the `\r` of a `\r\n`; the byte range must match the text.
    const p = file('{"a":1}\r\n{"bé":2}\r\n\r\n');
    const lines = await collect(p);
    expect(lines.map((l) => l.length)).toEqual([7, Buffer.byteLength('{"bé":2}'), 0]);
    for (const line of lines) expect(bytesAt(p, line)).toBe(line.text);
  });

  it('a last line without \\n is yielded with terminated:false and exact range', async () => {
    const p = file('{"a":1}\n{"ü":"x"}');
    const lines = await collect(p);
    expect(lines).toEqual([
      { text: '{"a":1}', lineNo: 1, offset: 0, length: 7, terminated: true },
      { text: '{"ü":"x"}', lineNo: 2, offset: 8, length: Buffer.byteLength('{"ü":"x"}'), terminated: false },
    ]);
    expect(bytesAt(p, lines[1])).toBe('{"ü":"x"}');
  });

  it('a file of one line without \\n', async () => {
    expect(await collect(file('{}'))).toEqual([{ text: '{}', lineNo: 1, offset: 0, length: 2, terminated: false }]);
  });

  it('blank and whitespace-only lines are yielded, with their numbers', async () => {
    const content = '{"a":1}\n\n   \n\t\n{"b":2}\n\n';
    const p = file(content);
    const lines = await collect(p);
    expect(lines).toEqual(modelLines(content));
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', '', '   ', '\t', '{"b":2}', '']);
    expect(lines.map((l) => isBlank(l.text))).toEqual([false, true, true, true, false, true]);
    expect(lines[1]).toEqual({ text: '', lineNo: 2, offset: 8, length: 0, terminated: true });
  });

  it('a file of just "\\n" is one blank terminated line', async () => {
    expect(await collect(file('\n'))).toEqual([{ text: '', lineNo: 1, offset: 0, length: 0, terminated: true }]);
  });

  it('a 3 MiB line (longer than the 1 MiB read chunk) between short lines', async () => {
    const big = `{"x":"${'a'.repeat(3 * MiB)}"}`;
    const content = `{"first":1}\n${big}\n{"after":"é"}\n{"last":true}`;
    const p = file(content);
    const lines = await collect(p);
    expect(lines.length).toBe(4);
    expect(lines.map(({ text, ...rest }) => ({ ...rest, textLength: text.length }))).toEqual(
      modelLines(content).map(({ text, ...rest }) => ({ ...rest, textLength: text.length })),
    );
    expect(lines[1].text).toBe(big);
    expect(lines[1].offset).toBe(12);
    expect(lines[1].length).toBe(Buffer.byteLength(big));
    expect(lines[2]).toEqual({
      text: '{"after":"é"}',
      lineNo: 3,
      offset: 12 + big.length + 1,
      length: Buffer.byteLength('{"after":"é"}'),
      terminated: true,
    });
    expect(lines[3].terminated).toBe(false);
    for (const line of lines) expect(bytesAt(p, line)).toBe(line.text);
  });

  it('many short lines across several chunks: every range exact', async () => {
    const rows: string[] = [];
    for (let i = 0, size = 0; size < 2.5 * MiB; i++) {
      const row = JSON.stringify({ i, s: 'ñ'.repeat(i % 37), e: '😀'.repeat(i % 5) });
      rows.push(row);
      size += Buffer.byteLength(row) + 1;
    }
    const content = `${rows.join('\n')}\n`;
    const p = file(content);
    const lines = await collect(p);
    expect(lines).toEqual(modelLines(content));
    const buf = readFileSync(p);
    for (const line of lines) expect(buf.toString('utf8', line.offset, line.offset + line.length)).toBe(line.text);
  });

  it('a multi-byte character that straddles the 1 MiB chunk boundary is decoded whole', async () => {
    // '😀' (4 bytes) occupies bytes CHUNK-2 .. CHUNK+1.
    const first = 'a'.repeat(MiB - 2);
    const content = `${first}😀\n{"n":2}\n`;
    const p = file(content);
    const lines = await collect(p);
    expect(lines.map((l) => l.text)).toEqual([`${first}😀`, '{"n":2}']);
    expect(lines[0].length).toBe(MiB + 2);
    expect(lines[1].offset).toBe(MiB + 3);
    for (const line of lines) expect(bytesAt(p, line)).toBe(line.text);
  });

  it('a \\r\\n split by the chunk boundary still drops the \\r from the text', async () => {
    // '\r' is the last byte of the first chunk, '\n' the first of the second.
    const first = 'b'.repeat(MiB - 1);
    const p = file(`${first}\r\n{"n":2}\n`);
    const lines = await collect(p);
    expect(lines.map((l) => l.text)).toEqual([first, '{"n":2}']);
    expect(lines[1].offset).toBe(MiB + 1);
  });

  it('a \\n exactly at the chunk boundary', async () => {
    const first = 'c'.repeat(MiB);
    const content = `${first}\n${'d'.repeat(10)}\n`;
    const lines = await collect(file(content));
    expect(lines).toEqual(modelLines(content));
  });

  it('startOffset: offsets stay absolute, reading starts at that byte', async () => {
    const content = '{"a":"é"}\n{"b":2}\n\n{"c":"日"}\n{"d":4}';
    const p = file(content);
    const all = await collect(p);
    const from = all[1].offset;
    const rest = await collect(p, from);
    expect(rest.map(({ lineNo: _n, ...r }) => r)).toEqual(all.slice(1).map(({ lineNo: _n, ...r }) => r));
    // line numbers count from the start offset (the reader cannot know the lines before it)
    expect(rest.map((l) => l.lineNo)).toEqual([1, 2, 3, 4]);
    for (const line of rest) expect(bytesAt(p, line)).toBe(line.text);
  });

  it('startOffset past 1 MiB into a file with a long line', async () => {
    const big = 'z'.repeat(MiB + 100);
    const content = `${big}\n{"x":1}\n{"y":"ß"}\n`;
    const p = file(content);
    const start = big.length + 1;
    expect(await collect(p, start)).toEqual(modelLines(content, start));
  });

  it('startOffset at the end of the file: no lines', async () => {
    const content = '{"a":1}\n';
    expect(await collect(file(content), Buffer.byteLength(content))).toEqual([]);
  });

  it('a missing file rejects', async () => {
    await expect(collect(join(tmp.path, 'missing.jsonl'))).rejects.toThrow(/ENOENT/);
  });
});

describe('isBlank', () => {
  it('empty and whitespace-only lines are blank', () => {
    for (const s of ['', ' ', '   ', '\t', ' \t ', '\r', '\u00a0']) expect(isBlank(s), JSON.stringify(s)).toBe(true);
  });

  it('anything with a non-space character is not blank', () => {
    for (const s of ['{}', ' x ', '\t0', '"', 'null']) expect(isBlank(s), JSON.stringify(s)).toBe(false);
  });
});

describe('jsonlLines: encoding', () => {
  it('flags a line whose bytes are not valid UTF-8 (and only that line)', async () => {
    const p = join(tempDir('jsonl-utf8-'), 'bad.jsonl');
    writeFileSync(p, Buffer.concat([Buffer.from('{"a":"ok"}\n{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n{"a":"é"}')]));
    const lines = [];
    for await (const line of jsonlLines(p)) lines.push(line.utf8);
    expect(lines).toEqual([true, false, true]);
  });
});
