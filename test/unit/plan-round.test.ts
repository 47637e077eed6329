/**
 * Re-judgment planning in flat memory: `writeRoundPlan` against a plain in-memory reference (every
 * listed row whose key has fewer sidecar attempts than the cap and no terminal one, in plan order),
 * with its sorts in memory and forced to spill to disk.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rejudgeListPath, writeRoundPlan, type RoundRequest } from '../../activities/plan-round.js';
import { lineKeyId } from '../../src/contract/row-key.js';
import type { PlanSummary } from '../../src/contract/run-spec.js';
import { lineDigest } from '../../src/io/line-digest.js';
import { InputChangedError } from '../../src/contract/errors.js';
import { PLAN_RECORD_BYTES, PlanWriter, readPlanRange, type PlanRecord } from '../../src/planning/plan-file.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-round-');
const AGENTS = ['agent_a', 'agent_b', 'agent_c'];

const failure = (t: string, r: number, terminal = false) =>
  `{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_task_index":${t},"_ng_rollout_index":${r}${terminal ? ',"_ng_failure_terminal":true' : ''}}`;

/** A round that just finished: its source, plan, rejudge lists (unsorted, several files) and sidecar. */
async function finishedRound(
  n: number,
  maxAttempts: number,
): Promise<{ req: RoundRequest; records: PlanRecord[]; listed: number[]; sidecar: string[] }> {
  const workDir = tmp.freshDir();
  const taskOf = (i: number) => (i === n - 1 ? '9007199254740993' : i === n - 2 ? '9007199254740992' : String(i % Math.ceil(n * 0.8)));
  const lines = Array.from({ length: n }, (_, i) => (i % 19 === 4 ? '{"keyless":true}' : failure(taskOf(i), i % 2)));
  const sourcePath = join(workDir, 'rollouts_failures.jsonl');
  writeFileSync(sourcePath, lines.join('\n') + '\n');
  const records: PlanRecord[] = [];
  let offset = 0;
  for (const [i, line] of lines.entries()) {
    records.push({
      sourceOffset: offset,
      sourceLength: Buffer.byteLength(line),
      sourceLine: i + 1,
      inputOffset: 1000 + i,
      inputLength: 7 + i,
      agent: i % AGENTS.length,
      server: i % 2,
      sourceDigest: lineDigest(Buffer.from(line)),
      inputDigest: BigInt(i),
    });
    offset += Buffer.byteLength(line) + 1;
  }
  const planPath = join(workDir, 'plan-r1.bin');
  const w = await PlanWriter.create(planPath);
  for (const r of records) await w.add(r);
  await w.close();
  // Judge-failed rows of round 1: every third row, written by 4 batches in no particular order.
  const listed = records.map((_, i) => i).filter((i) => i % 3 !== 1);
  for (let b = 0; b < 4; b++) writeFileSync(rejudgeListPath(workDir, 0, b), JSON.stringify(listed.filter((i) => i % 4 === b).reverse()));
  writeFileSync(rejudgeListPath(workDir, 1, 0), JSON.stringify([1])); // another round's list: ignored
  // Sidecar: attempts per key from 0 to maxAttempts, some terminal, a cut-off last line.
  const sidecar: string[] = [];
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < (i * 7) % (maxAttempts + 1); a++) sidecar.push(failure(taskOf(i), i % 2, i % 23 === 0 && a === 0));
  }
  sidecar.push('', '{"keyless":1}');
  const sidecarPath = join(workDir, 'out_failures.jsonl');
  writeFileSync(sidecarPath, sidecar.join('\n') + '\n' + failure('0', 0).slice(0, 20));
  const plan: PlanSummary = {
    planPath,
    recordBytes: PLAN_RECORD_BYTES,
    sourcePath,
    rows: n,
    agents: AGENTS,
    servers: ['rs0', 'rs1'],
    rowsPerAgent: {},
  };
  // Batch 4 has no list (it selected no row).
  return {
    req: { workDir, round: 0, batches: [0, 1, 2, 3, 4], segment: 1, plan, sidecar: sidecarPath, maxAttempts },
    records,
    listed,
    sidecar,
  };
}

/** The reference: Maps of attempts and terminal keys, then the listed rows in plan order. */
function expectedPlan(round: Awaited<ReturnType<typeof finishedRound>>): PlanRecord[] {
  const attempts = new Map<string, number>();
  const terminal = new Set<string>();
  for (const line of round.sidecar) {
    const id = line.trim() === '' ? null : lineKeyId(line);
    if (id === null) continue;
    attempts.set(id, (attempts.get(id) ?? 0) + 1);
    if (line.includes('"_ng_failure_terminal":true')) terminal.add(id);
  }
  const source = readFileSync(round.req.plan.sourcePath);
  return round.listed
    .map((i) => round.records[i])
    .filter((rec) => {
      const id = lineKeyId(source.toString('utf8', rec.sourceOffset, rec.sourceOffset + rec.sourceLength));
      return id !== null && !terminal.has(id) && (attempts.get(id) ?? 0) < round.req.maxAttempts;
    });
}

describe('writeRoundPlan (re-judgment) in flat memory', () => {
  it.each([
    ['sorts in memory', undefined],
    ['sorts spilled every 5 records', 5],
    ['one record per run (merged in levels)', 1],
  ])('plans the retryable listed rows, in plan order, with rows per agent: %s', async (_label, maxRecords) => {
    const round = await finishedRound(300, 3);
    const want = expectedPlan(round);
    expect(want.length).toBeGreaterThan(50);
    expect(want.length).toBeLessThan(round.listed.length);
    const planPath = join(round.req.workDir, 'plan-r2.bin.tmp');
    const got = await writeRoundPlan(round.req, planPath, { maxRecords });
    expect(got.rows).toBe(want.length);
    expect(await readPlanRange(planPath, 0, got.rows, PLAN_RECORD_BYTES)).toEqual(want);
    const perAgent: Record<string, number> = {};
    for (const r of want) perAgent[AGENTS[r.agent]] = (perAgent[AGENTS[r.agent]] ?? 0) + 1;
    expect(Object.entries(got.rowsPerAgent)).toEqual(Object.entries(perAgent)); // same counts, same key order
    expect(readdirSync(round.req.workDir).filter((f) => !/\.(bin|json|jsonl|tmp)$/.test(f))).toEqual([]); // scratch removed
  });

  it('a judge-failed row whose source line changed since the plan stops the round, naming the file and line', async () => {
    const round = await finishedRound(40, 3);
    const i = round.listed[3];
    const rec = round.records[i];
    const source = readFileSync(round.req.plan.sourcePath);
    source[rec.sourceOffset + 5] ^= 1; // one changed byte in a listed row
    writeFileSync(round.req.plan.sourcePath, source);
    const planPath = join(round.req.workDir, 'plan-r2.bin.tmp');
    const err = await writeRoundPlan(round.req, planPath).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputChangedError);
    expect((err as Error).message).toContain(
      `'${round.req.plan.sourcePath}' changed after this run planned it: line ${rec.sourceLine} is not the row that was planned`,
    );
  });

  it('a plan of another version (before digests: no record size, or 40-byte CRC-32 records) is refused, not misread', async () => {
    const round = await finishedRound(60, 3);
    for (const recordBytes of [undefined, 40]) {
      const req = { ...round.req, plan: { ...round.req.plan, recordBytes } };
      const err = await writeRoundPlan(req, join(round.req.workDir, 'plan-r2.bin.tmp')).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^this run's plan was written by another version of reverify .*--resume/);
    }
  });

  it('--retry-terminal-timeouts: a key whose terminal row is a timeout (or a repairable fault) is re-judged, a skipped one is not', async () => {
    const round = await finishedRound(12, 3);
    const source = readFileSync(round.req.plan.sourcePath);
    const keyOfRow = (i: number) => {
      const rec = round.records[i];
      return JSON.parse(source.toString('utf8', rec.sourceOffset, rec.sourceOffset + rec.sourceLength)) as Record<string, unknown>;
    };
    const [a, b, c] = round.listed.filter((i) => keyOfRow(i)._ng_task_index !== undefined).slice(0, 3);
    const terminalRow = (i: number, cls: string) => {
      const { _ng_task_index, _ng_rollout_index } = keyOfRow(i);
      return JSON.stringify({ reward: 0.0, _ng_failure_class: cls, _ng_failure_terminal: true, _ng_task_index, _ng_rollout_index });
    };
    writeFileSync(
      round.req.sidecar,
      [terminalRow(a, 'timeout_exceeded'), terminalRow(b, 'eval_missing'), terminalRow(c, 'skipped')].join('\n') + '\n',
    );
    const planned = async (retryTerminalTimeouts: boolean) => {
      const planPath = join(round.req.workDir, `plan-r2-${retryTerminalTimeouts}.bin.tmp`);
      const got = await writeRoundPlan({ ...round.req, retryTerminalTimeouts }, planPath);
      return (await readPlanRange(planPath, 0, got.rows, PLAN_RECORD_BYTES)).map((r) => r.sourceLine - 1);
    };
    const without = await planned(false);
    const withFlag = await planned(true);
    expect(without).not.toContain(a);
    expect(without).not.toContain(b);
    expect(withFlag).toContain(a);
    expect(withFlag).toContain(b);
    expect(withFlag).not.toContain(c);
    expect(withFlag.length).toBe(without.length + 2);
  });

  it('no judge-failed rows: an empty plan', async () => {
    const round = await finishedRound(20, 2);
    const req = { ...round.req, round: 5 };
    const planPath = join(req.workDir, 'plan-r6.bin.tmp');
    expect(await writeRoundPlan(req, planPath, { maxRecords: 2 })).toEqual({ rows: 0, rowsPerAgent: {} });
    expect(readFileSync(planPath).length).toBe(0);
  });
});
