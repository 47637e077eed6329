/**
 * `record_unstarted` for a plain run (src/planning/unstarted-rows.ts) over real files: the plan's
 * rollouts with no row in the outputs, indices as written (above 2^53, strings), once each; written
 * again (a retried activity after a crash) the file is the same, never a line twice; nothing left
 * unstarted leaves no file; rollouts omitted since leave the file.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineDigest } from '../../src/io/line-digest.js';
import { PLAN_RECORD_BYTES, PlanWriter } from '../../src/planning/plan-file.js';
import { dropUnstarted, recordUnstarted } from '../../src/planning/unstarted-rows.js';
import { keyId } from '../../src/contract/row-key.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-unstarted-');

/** A source file of `lines` and a plan of every line (in order); returns the plan for `recordUnstarted`. */
async function planOf(dir: string, lines: string[]) {
  const sourcePath = join(dir, 'rollouts.jsonl');
  writeFileSync(sourcePath, lines.map((l) => `${l}\n`).join(''));
  const planPath = join(dir, 'plan.bin');
  const w = await PlanWriter.create(planPath);
  let offset = 0;
  for (const [i, l] of lines.entries()) {
    const bytes = Buffer.from(l);
    const digest = lineDigest(bytes);
    await w.add({
      ...{ sourceOffset: offset, sourceLength: bytes.length, sourceLine: i + 1, inputOffset: 0, inputLength: 0, agent: 0, server: 0 },
      ...{ sourceDigest: digest, inputDigest: digest },
    });
    offset += bytes.length + 1;
  }
  await w.close();
  return { planPath, sourcePath, rows: lines.length, recordBytes: PLAN_RECORD_BYTES };
}

describe('recordUnstarted', () => {
  it('lists each planned rollout without a row once, indices as written; again gives the same file; none left: no file', async () => {
    const dir = tmp.freshDir();
    const big = '12345678901234567891';
    const plan = await planOf(dir, [
      `{"_ng_task_index":0,"_ng_rollout_index":0,"response":1}`,
      `{"_ng_task_index":${big},"_ng_rollout_index":0}`,
      `{"_ng_task_index":"t2","_ng_rollout_index":1}`,
      `{"_ng_task_index":3,"_ng_rollout_index":0}`,
      `{"_ng_task_index":4,"_ng_rollout_index":0}`,
    ]);
    const output = join(dir, 'out.jsonl');
    const sidecar = join(dir, 'out_failures.jsonl');
    const path = join(dir, 'out_unstarted.jsonl');
    writeFileSync(output, '{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1}\n');
    writeFileSync(sidecar, '{"_ng_task_index":3,"_ng_rollout_index":0,"_ng_failure_class":"timeout"}\n');
    const req = { plan, output, sidecar, path, reason: 'the run was cancelled' };
    expect(await recordUnstarted(req)).toBe(3);
    const first = readFileSync(path, 'utf8');
    const tail = ',"_ng_unstarted":true,"_ng_unstarted_reason":"the run was cancelled"}';
    expect(first.split('\n').filter(Boolean).sort()).toEqual(
      [
        `{"_ng_task_index":${big},"_ng_rollout_index":0${tail}`,
        `{"_ng_task_index":"t2","_ng_rollout_index":1${tail}`,
        `{"_ng_task_index":4,"_ng_rollout_index":0${tail}`,
      ].sort(),
    );
    // A retry (the worker died after writing, before the workflow recorded it): the same file.
    expect(await recordUnstarted(req)).toBe(3);
    expect(readFileSync(path, 'utf8')).toBe(first);
    // Every rollout has a row now: the file goes; no scratch or temporary file is left.
    writeFileSync(
      sidecar,
      [big, '"t2"', '4']
        .map((t) => `{"_ng_task_index":${t},"_ng_rollout_index":${t === '"t2"' ? 1 : 0},"_ng_failure_class":"x"}\n`)
        .join(''),
      {
        flag: 'a',
      },
    );
    expect(await recordUnstarted(req)).toBe(0);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['out.jsonl', 'out_failures.jsonl', 'plan.bin', 'rollouts.jsonl']);
  });

  it('lists every unstarted rollout of a plan read in several chunks and written in several writes', async () => {
    // 20,000 planned rows: ten chunks of plan records (2,048 each) and more than a megabyte of lines.
    const dir = tmp.freshDir();
    const rows = 20_000;
    const plan = await planOf(
      dir,
      Array.from({ length: rows }, (_, i) => `{"response":{"_ng_task_index":-1},"_ng_task_index":${i},"_ng_rollout_index":${i % 4}}`),
    );
    const output = join(dir, 'out.jsonl');
    const sidecar = join(dir, 'out_failures.jsonl');
    const path = join(dir, 'out_unstarted.jsonl');
    const done = (i: number) => i % 3 === 0;
    const row = (i: number) => `{"_ng_task_index":${i},"_ng_rollout_index":${i % 4},"reward":1}\n`;
    writeFileSync(output, Array.from({ length: rows }, (_, i) => (done(i) ? row(i) : '')).join(''));
    writeFileSync(sidecar, '');
    const reason = 'the run was cancelled';
    const expected = Array.from({ length: rows }, (_, i) => i)
      .filter((i) => !done(i))
      .map((i) => `{"_ng_task_index":${i},"_ng_rollout_index":${i % 4},"_ng_unstarted":true,"_ng_unstarted_reason":"${reason}"}`);
    expect(await recordUnstarted({ plan, output, sidecar, path, reason })).toBe(expected.length);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.sort()).toEqual(expected.sort());
  });

  it('dropUnstarted removes omitted rollouts from the file, and the file when none is left', async () => {
    const dir = tmp.freshDir();
    const path = join(dir, 'out_unstarted.jsonl');
    const line = (t: number) =>
      `{"_ng_task_index":${t},"_ng_rollout_index":0,"_ng_unstarted":true,"_ng_unstarted_reason":"the run was cancelled"}`;
    writeFileSync(path, [1, 2, 3].map((t) => line(t) + '\n').join(''));
    await dropUnstarted(path, new Set([keyId({ task: 2, rollout: 0 })]));
    expect(readFileSync(path, 'utf8')).toBe(line(1) + '\n' + line(3) + '\n');
    await dropUnstarted(path, new Set([keyId({ task: 1, rollout: 0 }), keyId({ task: 3, rollout: 0 })]));
    expect(readdirSync(dir)).toEqual([]);
    // A file of more than a megabyte (written in several writes): every line kept but those dropped, in order.
    const many = Array.from({ length: 20_000 }, (_, t) => line(t));
    writeFileSync(path, many.map((l) => l + '\n').join(''));
    await dropUnstarted(
      path,
      new Set(
        Array.from({ length: 20_000 }, (_, t) => t)
          .filter((t) => t % 3 === 0)
          .map((t) => keyId({ task: t, rollout: 0 })),
      ),
    );
    expect(readFileSync(path, 'utf8')).toBe(
      many
        .filter((_, t) => t % 3 !== 0)
        .map((l) => l + '\n')
        .join(''),
    );
  });
});
