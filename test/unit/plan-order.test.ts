/**
 * `--order random`: the plan is a permutation of the file-order plan's rows, grouped by task (each
 * task's rows together, in file order), the same for the same seed (in memory and through the
 * external sort), another for another seed; `--limit` still keeps the first N rollouts of the file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planInto, type PlanRequest } from '../../activities/plan-run/plan-into.js';
import type { RoutingTable } from '../../src/config/routing.js';
import { readPlanRange } from '../../src/planning/plan-file.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { inputLine, successLine } from '../helpers/spec-fixtures.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-plan-order-');
const routing: RoutingTable = { agents: { agent_a: 'rs_a' }, catchAll: null, servers: { rs_a: 'http://a' }, taskSources: [] };

/** 60 tasks × 1..5 rollouts, the rollouts file shuffled (a task's rows scattered through it). */
function files(dir: string) {
  const r = mulberry32(3);
  const keys: Array<{ t: number; r: number }> = [];
  for (let t = 0; t < 60; t++) for (let k = 0; k < 1 + Math.floor(r() * 5); k++) keys.push({ t, r: k });
  const shuffled = [...keys].sort(() => r() - 0.5);
  const paths = { inputs: join(dir, 'inputs.jsonl'), rollouts: join(dir, 'rollouts.jsonl') };
  writeFileSync(paths.inputs, keys.map((k) => inputLine(k)).join('\n') + '\n');
  writeFileSync(paths.rollouts, shuffled.map((k) => successLine(k)).join('\n') + '\n');
  return paths;
}

/** The plan's rows as `{ task, line }`, in plan order. */
async function planRows(dir: string, name: string, over: Partial<PlanRequest>) {
  const paths = files(dir);
  const req: PlanRequest = {
    inputsPath: paths.inputs,
    rolloutsPath: paths.rollouts,
    workDir: join(dir, name),
    routing,
    limit: null,
    judgeFailedOnly: false,
    resume: false,
    outputs: { output: join(dir, 'out.jsonl'), sidecar: join(dir, 'out_failures.jsonl') },
    outputsCleared: true,
    maxAttempts: 3,
    repairTruncated: false,
    ...over,
  };
  const out = await planInto(req);
  const lines = readFileSync(paths.rollouts, 'utf8').split('\n');
  const records = await readPlanRange(out.planPath, 0, out.rows, out.recordBytes);
  const rows = records.map((rec) => ({
    task: (JSON.parse(lines[rec.sourceLine - 1]) as { _ng_task_index: number })._ng_task_index,
    line: rec.sourceLine,
  }));
  return { rows, summary: out };
}

const sortedLines = (rows: Array<{ line: number }>) => rows.map((r) => r.line).sort((a, b) => a - b);

describe('plan order', () => {
  it('random: a permutation of the file-order plan, grouped by task in file order, fixed by the seed', async () => {
    const dir = tmp.freshDir();
    const file = await planRows(dir, 'file', {});
    const random = await planRows(dir, 'r1', { order: { kind: 'random', seed: 42 } });
    const spilled = await planRows(dir, 'r2', { order: { kind: 'random', seed: 42 }, sortMaxRecords: 5 });
    const other = await planRows(dir, 'r3', { order: { kind: 'random', seed: 43 } });
    expect(sortedLines(random.rows)).toEqual(file.rows.map((r) => r.line));
    expect(random.rows.map((r) => r.line)).not.toEqual(file.rows.map((r) => r.line));
    expect(spilled.rows).toEqual(random.rows);
    expect(other.rows).not.toEqual(random.rows);
    expect(random.summary.order).toEqual({ kind: 'random', seed: 42 });
    expect(random.summary.rowsPerAgent).toEqual(file.summary.rowsPerAgent);
    // Grouped: each task is one run of rows, its lines ascending; the tasks' order is not the file's.
    const runs: number[] = [];
    random.rows.forEach((row, i) => {
      if (i === 0 || random.rows[i - 1].task !== row.task) runs.push(row.task);
      else expect(row.line).toBeGreaterThan(random.rows[i - 1].line);
    });
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs.length).toBe(60);
  });

  it('random with --limit: the first N rollouts of the file, permuted', async () => {
    const dir = tmp.freshDir();
    const file = await planRows(dir, 'file', { limit: 25 });
    const random = await planRows(dir, 'random', { limit: 25, order: { kind: 'random', seed: 7 } });
    expect(file.rows.map((r) => r.line)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(sortedLines(random.rows)).toEqual(file.rows.map((r) => r.line));
  });
});
