/** The `start_or_resume` identity check's decision (src/run-checks/input-identity.ts) and the digest it compares (src/io/content-digest.ts). */
import { describe, expect, it } from 'vitest';
import { ContentDigest } from '../../src/io/content-digest.js';
import { lineDigest } from '../../src/io/line-digest.js';
import { otherInputsMessage } from '../../src/run-checks/input-identity.js';

const check = { output: 'o.jsonl', inputsPath: 'in.jsonl', rolloutsPath: 'ro.jsonl' };
const digestOf = (lines: string[]) => {
  const d = new ContentDigest();
  for (const l of lines) d.add(lineDigest(Buffer.from(l)));
  return d.hex();
};

describe('input identity', () => {
  it('a digest of the lines in order: a changed or reordered row changes it', () => {
    const a = digestOf(['{"a":1}', '{"b":2}']);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(digestOf(['{"a":1}', '{"b":2}'])).toBe(a);
    expect(digestOf(['{"b":2}', '{"a":1}'])).not.toBe(a);
    expect(digestOf(['{"a":1}', '{"b":3}'])).not.toBe(a);
  });

  it('refuses the first file that differs, names it; a rollouts digest not known now (--limit) or not saved is not compared', () => {
    expect(otherInputsMessage({ inputs: 'a', rollouts: 'b' }, { inputs: 'a', rollouts: 'b' }, check, 'c.json')).toBeNull();
    expect(otherInputsMessage({ inputs: 'x', rollouts: 'y' }, { inputs: 'a', rollouts: 'b' }, check, 'c.json')).toMatch(
      /^--resume: --inputs 'in\.jsonl' is not the file this run was started with/,
    );
    expect(otherInputsMessage({ inputs: 'a', rollouts: 'y' }, { inputs: 'a' }, check, 'c.json')).toBeNull();
    expect(otherInputsMessage({ inputs: 'a' }, { inputs: 'a', rollouts: 'b' }, check, 'c.json')).toBeNull();
  });
});
