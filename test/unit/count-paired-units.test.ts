/**
 * The count of a plan's units (activities/count-paired-units.ts): the facts of a row read from its
 * bytes agree with the string reader, and the count of a plan split into two ranges (one on a
 * thread) is the count of the whole, whatever row it is split at, against a plain reference.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { countOnThread, countPairedUnits } from '../../activities/count-paired-units.js';
import { countSegment, joinSegments, type CountedPlan } from '../../activities/count-paired-units/segment.js';
import { rawField } from '../../src/contract/json-spans.js';
import { inUnitRange, pairedFactsOf, pairedFactsOfLine } from '../../src/contract/paired-facts.js';
import { lineDigest } from '../../src/io/line-digest.js';
import { PLAN_RECORD_BYTES, PlanWriter } from '../../src/planning/plan-file.js';
import type { PlannedUnits } from '../../src/stats/run-estimate.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-count-units-');
const AGENTS = ['agent_a', 'agent_b'];

describe('pairedFactsOfLine', () => {
  const rows = [
    '{"_ng_task_index": 12, "_ng_rollout_index": 0, "reward": 0.5, "response": {}}',
    '{"_ng_task_index":3,"reward":true}',
    '{"reward":null}',
    '{"_ng_task_index":1}',
    '{}',
    ' {"reward":1.0e0 ,"_ng_task_index":"t-7"}\n',
    // Non-ASCII before the members (byte and string offsets differ), and in the task.
    '{"response":{"text":"été — 漢字 🎉","reward":0.9},"_ng_task_index":"tâche 🎉","reward":0.25}',
    // A nested "reward" is not the row's; the last of repeated keys wins.
    '{"response":{"reward":1},"reward":0,"reward":0.75,"_ng_task_index":1,"_ng_task_index":2}',
    // Keys written with escapes.
    '{"rew\\u0061rd":0.5,"_ng_task_\\u0069ndex":"9"}',
    '{"reward":"0.5","_ng_task_index":[1,2]}',
    '{"reward":-1,"_ng_task_index":9007199254740993}',
  ];
  // The string reader (`rawField`: topLevelSpans of the decoded row) as the reference.
  it.each(rows)('reads %j as the string reader does', (row) => {
    expect(pairedFactsOfLine(Buffer.from(row))).toEqual(pairedFactsOf((key) => rawField(row, key)));
  });
  it('refuses bytes that are not one JSON object', () => {
    expect(() => pairedFactsOfLine(Buffer.from('[1]'))).toThrow(SyntaxError);
  });
});

/** A plan over source rows of (agent, task, reward) in plan order; the source file in another order. */
function planOf(rows: Array<[agent: number, task: string, reward: string]>): Promise<CountedPlan> {
  const dir = tmp.freshDir();
  const sourcePath = join(dir, 'rollouts.jsonl');
  const lines = rows.map(
    ([, task, reward], i) => `{"response":{"é":${i}},"reward":${reward},"_ng_task_index":${task},"_ng_rollout_index":${i}}`,
  );
  // The source file holds the rows backwards: the plan's order is not the file's.
  const places: Array<{ offset: number; length: number }> = [];
  let offset = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    places[i] = { offset, length: Buffer.byteLength(lines[i]) };
    offset += places[i].length + 1;
  }
  writeFileSync(sourcePath, [...lines].reverse().join('\n') + '\n');
  const planPath = join(dir, 'plan.bin');
  return (async () => {
    const w = await PlanWriter.create(planPath);
    for (const [i, [agent]] of rows.entries())
      await w.add({
        sourceOffset: places[i].offset,
        sourceLength: places[i].length,
        sourceLine: rows.length - i,
        inputOffset: 0,
        inputLength: 1,
        agent,
        server: 0,
        sourceDigest: lineDigest(Buffer.from(lines[i])),
        inputDigest: 0n,
      });
    await w.close();
    return { planPath, recordBytes: PLAN_RECORD_BYTES, sourcePath, agents: AGENTS, rows: rows.length };
  })();
}

/** The plain reference: runs of equal (agent, task) in plan order. */
function reference(rows: Array<[number, string, string]>): Record<string, PlannedUnits> {
  const out: Record<string, PlannedUnits> = {};
  const runs: Array<{ agent: string; task: string; rows: number }> = [];
  for (const [a, task, reward] of rows) {
    const agent = AGENTS[a];
    const last = runs[runs.length - 1];
    if (last && last.agent === agent && last.task === task) last.rows++;
    else runs.push({ agent, task, rows: 1 });
    const p = (out[agent] ??= { units: 0, rows: 0, maxRows: 0, oldSum: 0, invalid: 0 });
    const r = Number(reward);
    p.rows++;
    if (inUnitRange(Number.isFinite(r) ? r : null)) p.oldSum += r;
    else p.invalid++;
  }
  for (const u of runs) {
    out[u.agent].units++;
    out[u.agent].maxRows = Math.max(out[u.agent].maxRows, u.rows);
  }
  return out;
}

/** Runs of one agent's task of several rows, tasks repeated later, one agent's run between another's, bad rewards. */
const ROWS: Array<[number, string, string]> = [
  [0, '1', '1'],
  [0, '1', '0'],
  [0, '1', '1'],
  [1, '1', '0.5'],
  [1, '2', '0'],
  [0, '2', '1'],
  [0, '2', '1'],
  [0, '2', '0'],
  [0, '2', '1'],
  [1, '2', 'null'],
  [1, '"x"', '2'],
  [1, '"x"', '0'],
  [0, '1', '0'],
  [1, '1', '1'],
  [1, '1', '1'],
  [0, '3', '0.25'],
];

describe('the count of a plan’s units', () => {
  it('counts two ranges joined as the whole, split at every row', async () => {
    const plan = await planOf(ROWS);
    const none = () => undefined;
    const whole = await countSegment(plan, 0, ROWS.length, none);
    expect(whole.perAgent).toEqual(reference(ROWS));
    for (let k = 0; k <= ROWS.length; k++) {
      const joined = joinSegments(await countSegment(plan, 0, k, none), await countSegment(plan, k, ROWS.length, none));
      expect(joined, `split at ${k}`).toEqual(whole);
    }
  });

  it('joins three ranges where the middle one is inside a single unit', async () => {
    const plan = await planOf(ROWS);
    const none = () => undefined;
    const parts = [await countSegment(plan, 5, 7, none), await countSegment(plan, 7, 8, none), await countSegment(plan, 8, 9, none)];
    expect(parts.reduce(joinSegments)).toEqual(await countSegment(plan, 5, 9, none));
  });

  it('counts the second half on a thread: the same units', async () => {
    // 3,002 rows: the halves meet inside a unit (rows 1,500 and 1,501: one agent, one task).
    const rows = Array.from({ length: 3002 }, (_, i): [number, string, string] => [
      Math.floor(i / 7) % 2,
      String(Math.floor(i / 3) % 400),
      String((i % 5) / 4),
    ]);
    const plan = await planOf(rows);
    const counted = await new MockActivityEnvironment().run(countPairedUnits, { plan, threadMinRows: 10 });
    expect(counted).toEqual(reference(rows));
    const none = () => undefined;
    // On one thread, read in two chunks (2,048 rows each): rows 2,046–2,048 are one unit across them.
    expect((await countSegment(plan, 0, rows.length, none)).perAgent).toEqual(reference(rows));
    const onThread = await countOnThread(plan, 1501, none).segment;
    expect(onThread).not.toBeNull();
    expect(joinSegments(await countSegment(plan, 0, 1501, none), onThread!).perAgent).toEqual(reference(rows));
  });

  it.each([
    ['the first half (this thread)', 10],
    ['the second half (the thread, then this thread again)', 2990],
  ])('fails when a planned row changed since the plan, in %s', async (_where, row) => {
    const rows = Array.from({ length: 3002 }, (_, i): [number, string, string] => [i % 2, String(i), '1']);
    const plan = await planOf(rows);
    // The row's `"é":<i>` becomes `"é":<i+1>`, same length: only its digest tells.
    const text = readFileSync(plan.sourcePath, 'utf8');
    writeFileSync(plan.sourcePath, text.replace(`{"é":${row}}`, `{"é":${row + 1}}`.slice(0, `{"é":${row}}`.length)));
    const failed = new MockActivityEnvironment().run(countPairedUnits, { plan, threadMinRows: 10 });
    await expect(failed).rejects.toThrow(
      `'${plan.sourcePath}' changed after this run planned it: line ${3002 - row} is not the row that was planned`,
    );
    await expect(failed).rejects.toMatchObject({ nonRetryable: true });
  });
});
