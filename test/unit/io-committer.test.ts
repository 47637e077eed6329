import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { commitParts } from '../../src/io/committer.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-committer-');

function part(dir: string, name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

const bytes = (s: string) => Buffer.byteLength(s);
const read = (p: string) => readFileSync(p, 'utf8');

const P1 = '{"row":1,"t":"é"}\n{"row":2}\n';
const P2 = '{"row":3,"t":"日本"}\n';
const P3 = '{"row":4}\n{"row":5,"e":"😀"}\n';

describe('commitParts', () => {
  it('creates a missing target, appends the parts in order, returns the new byte length', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const parts = [part(d, 'b0.jsonl', P1), part(d, 'b1.jsonl', P2), part(d, 'b2.jsonl', P3)];
    const len = await commitParts(out, 0, parts);
    expect(read(out)).toBe(P1 + P2 + P3);
    expect(len).toBe(bytes(P1 + P2 + P3));
    expect(len).toBe(statSync(out).size);
  });

  it('successive commits with the recorded length append after the previous ones', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    const l2 = await commitParts(out, l1, [part(d, 'b', P2)]);
    const l3 = await commitParts(out, l2, [part(d, 'c', P3)]);
    expect(read(out)).toBe(P1 + P2 + P3);
    expect([l1, l2, l3]).toEqual([bytes(P1), bytes(P1 + P2), bytes(P1 + P2 + P3)]);
  });

  it('appends after existing content that is already committed (expectedLength = current size)', async () => {
    const d = freshDir();
    const out = part(d, 'out.jsonl', '{"seeded":true}\n');
    const len = await commitParts(out, bytes('{"seeded":true}\n'), [part(d, 'p', P2)]);
    expect(read(out)).toBe(`{"seeded":true}\n${P2}`);
    expect(len).toBe(statSync(out).size);
  });

  it('retry after a crash that left half a line past expectedLength: exactly one copy', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    const p2 = part(d, 'b', P2 + P3);
    // the crashed attempt wrote part of the batch, then died before the workflow recorded it
    appendFileSync(out, (P2 + P3).slice(0, 12));
    const l2 = await commitParts(out, l1, [p2]);
    expect(read(out)).toBe(P1 + P2 + P3);
    expect(l2).toBe(bytes(P1 + P2 + P3));
    expect(statSync(out).size).toBe(l2);
  });

  it('retry after a crash that left a whole copy of the parts (plus garbage): exactly one copy', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    const parts = [part(d, 'b', P2), part(d, 'c', P3)];
    appendFileSync(out, P2 + P3 + 'garbage\u0000\u0001{"half":');
    const l2 = await commitParts(out, l1, parts);
    expect(read(out)).toBe(P1 + P2 + P3);
    expect(l2).toBe(bytes(P1 + P2 + P3));
  });

  it('the same commit run twice with the same expectedLength (result not recorded): one copy, same length', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    const parts = [part(d, 'b', P2), part(d, 'c', P3)];
    const first = await commitParts(out, l1, parts);
    const again = await commitParts(out, l1, parts);
    expect(again).toBe(first);
    expect(read(out)).toBe(P1 + P2 + P3);
  });

  it('a crash left bytes in the middle of a multi-byte character: cut at the recorded byte length', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    appendFileSync(out, Buffer.from('😀').subarray(0, 2));
    const l2 = await commitParts(out, l1, [part(d, 'b', P2)]);
    expect(readFileSync(out)).toEqual(Buffer.from(P1 + P2, 'utf8'));
    expect(l2).toBe(bytes(P1 + P2));
  });

  it('no parts: nothing appended, returns expectedLength; extra bytes are still cut', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    expect(await commitParts(out, l1, [])).toBe(l1);
    expect(read(out)).toBe(P1);
    appendFileSync(out, '{"partial');
    expect(await commitParts(out, l1, [])).toBe(l1);
    expect(read(out)).toBe(P1);
  });

  it('empty part files are skipped, the others are appended in order', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const parts = [part(d, 'e0', ''), part(d, 'p1', P1), part(d, 'e1', ''), part(d, 'p2', P2), part(d, 'e2', '')];
    const len = await commitParts(out, 0, parts);
    expect(read(out)).toBe(P1 + P2);
    expect(len).toBe(bytes(P1 + P2));
  });

  it('a missing target with no parts is created empty (length 0)', async () => {
    const d = freshDir();
    const out = join(d, 'out_failures.jsonl');
    expect(await commitParts(out, 0, [])).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(statSync(out).size).toBe(0);
  });

  it('a part larger than 1 MiB is appended whole', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const big = `${JSON.stringify({ x: 'y'.repeat(3 << 20) })}\n`;
    const len = await commitParts(out, 0, [part(d, 'big', big), part(d, 'small', P2)]);
    expect(len).toBe(bytes(big + P2));
    expect(read(out) === big + P2).toBe(true);
  });

  it('a target shorter than expectedLength: ConfigError naming the file and what to do; file untouched', async () => {
    const d = freshDir();
    const out = part(d, 'out.jsonl', '{"row":1}\n');
    const before = read(out);
    const err = await commitParts(out, 1_000, [part(d, 'p', P2)]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain(out);
    expect(msg).toContain('10 bytes');
    expect(msg).toContain('1000 bytes');
    expect(msg).toMatch(/Restore it/);
    expect(msg).toMatch(/--overwrite/);
    expect(read(out)).toBe(before);
  });

  it('a missing target with expectedLength > 0 (deleted by someone): ConfigError naming the file', async () => {
    const d = freshDir();
    const out = join(d, 'gone.jsonl');
    await expect(commitParts(out, 42, [part(d, 'p', P2)])).rejects.toSatisfy(
      (e: unknown) => e instanceof ConfigError && e.message.includes(out) && e.message.includes('--overwrite'),
    );
  });

  it('a missing part file rejects (the commit is retried, and the retry cuts whatever was appended)', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    const l1 = await commitParts(out, 0, [part(d, 'a', P1)]);
    await expect(commitParts(out, l1, [part(d, 'b', P2), join(d, 'missing')])).rejects.toThrow(/ENOENT/);
    const l2 = await commitParts(out, l1, [part(d, 'b2', P2), part(d, 'c', P3)]);
    expect(read(out)).toBe(P1 + P2 + P3);
    expect(l2).toBe(bytes(P1 + P2 + P3));
  });
});
