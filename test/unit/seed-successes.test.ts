/**
 * Seeding (spec §4.6.3) in flat memory: `writeSeedPart` against a plain in-memory reference (the
 * present-set algorithm of the spec), with its sorts in memory and forced to spill to disk.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSeedPart } from '../../activities/seed-successes.js';
import { InputChangedError } from '../../src/contract/errors.js';
import { lineKeyId } from '../../src/contract/row-key.js';
import { fileNow } from '../../src/io/file-identity.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-seed-');

/** The spec's algorithm, in memory: copy non-blank lines whose key is not present yet, adding it. */
function expectedSeed(outputText: string | null, rolloutsText: string): string {
  const present = new Set<string>();
  for (const line of (outputText ?? '').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const id = lineKeyId(line);
      if (id !== null) present.add(id);
    } catch {
      // the cut-off last line (repair-truncated): not a key
    }
  }
  let out = '';
  const lines = rolloutsText.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (line.trim() === '') continue;
    const id = lineKeyId(line.replace(/\r$/, ''));
    if (id !== null) {
      if (present.has(id)) continue;
      present.add(id);
    }
    out += line + '\n'; // a missing final newline is added
  }
  return out;
}

const row = (t: string, r: string, extra = '') => `{"_ng_task_index":${t},"_ng_rollout_index":${r},"reward":1.0${extra}}`;

/** A --rollouts file: duplicates, keyless and blank lines, CRLF, big integers, 1/1.0/true, no final newline. */
function rolloutsText(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = (i * 37) % Math.ceil(n / 2); // about half the keys repeat
    if (i % 11 === 3) lines.push('{"reward":0.5,"note":"keyless ' + i + '"}');
    else if (i % 13 === 5) lines.push('   ');
    else if (i % 17 === 2) lines.push(row(String(t), '0', ',"crlf":true') + '\r');
    else lines.push(row(String(t), '0', `,"i":${i},"é":"ü"`));
  }
  lines.push(row('9007199254740993', '1'), row('9007199254740992', '1'), row('9007199254740993', '1', ',"dup":1'));
  lines.push(row('1', '7'), row('true', '7'), row('1.0', '7'), row('"1"', '7'), row('null', '7'), '{"_ng_task_index":1}');
  return lines.join('\n'); // no final newline: one is added to the copy
}

/** An output holding some of the keys, a keyless line and a cut-off last line. */
const outputText = [
  row('0', '0'),
  '',
  row('3', '0'),
  '{"keyless":true}',
  row('9007199254740992', '1'),
  '{"_ng_task_index":5,"_ng_rol',
].join('\n');

async function seed(output: string | null, rollouts: string, maxRecords?: number) {
  const workDir = tmp.freshDir();
  const rolloutsPath = join(workDir, 'rollouts.jsonl');
  writeFileSync(rolloutsPath, rollouts);
  const outputPath = join(workDir, 'out.jsonl');
  if (output !== null) writeFileSync(outputPath, output);
  const part = join(workDir, 'seed.main.part');
  const seeded = await writeSeedPart({ rolloutsPath, output: outputPath, workDir }, part, { maxRecords });
  const files = readdirSync(workDir).sort();
  return { seeded, text: readFileSync(part, 'utf8'), files };
}

describe('writeSeedPart (spec §4.6.3) in flat memory', () => {
  it.each([
    ['sorts in memory', undefined],
    ['sorts spilled every 3 records (several runs, merged in levels)', 3],
    ['one record per run', 1],
  ])('copies what the present-set algorithm copies, byte for byte, in file order: %s', async (_label, maxRecords) => {
    const rollouts = rolloutsText(400);
    const want = expectedSeed(outputText, rollouts);
    const got = await seed(outputText, rollouts, maxRecords);
    expect(got.text).toBe(want);
    expect(got.seeded).toBe(want.split('\n').length - 1);
    expect(got.files).toEqual(['out.jsonl', 'rollouts.jsonl', 'seed.main.part']); // scratch removed
  });

  it('copies 20,000 lines read thousands at a time, and lines bigger than the copy buffer and a read window', async () => {
    const big = (t: string, mib: number) => row(t, '0', `,"big":"${'x'.repeat(mib << 20)}"`);
    const rollouts = [rolloutsText(10_000), big('777777', 2), rolloutsText(10_000), big('888888', 9), row('999999', '0')].join('\n');
    const got = await seed(outputText, rollouts);
    expect(got.text === expectedSeed(outputText, rollouts)).toBe(true);
  });

  it('no output yet: every first key and every keyless line; an empty --rollouts: an empty part', async () => {
    const rollouts = rolloutsText(60);
    const got = await seed(null, rollouts, 2);
    expect(got.text).toBe(expectedSeed(null, rollouts));
    expect(got.text).toContain('"crlf":true}\r\n');
    const empty = await seed(null, '', 2);
    expect(empty).toMatchObject({ seeded: 0, text: '' });
  });
});

describe('writeSeedPart refuses a --rollouts file changed since the plan', () => {
  it('a changed size, modification or status-change time stops seeding with InputChangedError naming the file; the planned identity seeds', async () => {
    const workDir = tmp.freshDir();
    const rolloutsPath = join(workDir, 'rollouts.jsonl');
    writeFileSync(rolloutsPath, [row('1', '0'), row('2', '0')].join('\n') + '\n');
    const planned = { path: rolloutsPath, ...(await fileNow(rolloutsPath))! };
    const req = { rolloutsPath, output: join(workDir, 'out.jsonl'), workDir, planned };
    expect(await writeSeedPart(req, join(workDir, 'a.part'))).toBe(2);
    const mtime = statSync(rolloutsPath).mtime;
    writeFileSync(rolloutsPath, [row('2', '0'), row('1', '0')].join('\n') + '\n'); // same size, lines swapped
    utimesSync(rolloutsPath, new Date(), mtime); // the modification time put back: the status-change time still tells
    const err = await writeSeedPart(req, join(workDir, 'b.part')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputChangedError);
    expect((err as Error).message).toContain(`'${rolloutsPath}' changed after this run planned it: the successful rollouts to copy`);
    // --append into the run's own rollouts: the output is --rollouts, which opening may have repaired.
    expect(await writeSeedPart({ ...req, output: rolloutsPath }, join(workDir, 'c.part'))).toBe(0);
  });
});
