/**
 * Re-judgment planning reads no sidecar: `writeRoundPlan` against a plain in-memory reference that
 * counts each key's rows in the sidecar as it is after the commit (the spec: a listed row is kept
 * while its key has fewer failed attempts than the cap and no terminal one, terminal as the retry
 * rules say, in plan order). Nothing of the attempts is written by hand: the first plan and its
 * attempts come from the plan phase (`planInto`) over files that earlier invocations left (keys at
 * the cap, terminal rows of several classes), each round's batches route scripted replies through
 * `routeReply` (the sidecar rows they write, and what they list for the next round, as a batch
 * does), their sidecar rows are committed, and rounds are planned and checked until none is left.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeRoundPlan, type RoundRequest } from '../../activities/plan-round.js';
import { planInto, type PlanRequest } from '../../activities/plan-run/plan-into.js';
import { rejudgeListOf } from '../../activities/verify-batch/batch-files.js';
import { emptyCounts, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';
import { routeReply } from '../../activities/verify-batch/route-reply.js';
import { ConfigError, InputChangedError } from '../../src/contract/errors.js';
import { rawField } from '../../src/contract/json-spans.js';
import { REPAIRABLE_ENVIRONMENT_CLASSES } from '../../src/contract/keys.js';
import type { RetryRules } from '../../src/contract/retry-rules.js';
import { lineKeyId } from '../../src/contract/row-key.js';
import type { PlanSummary } from '../../src/contract/run-spec.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { ATTEMPTS_BYTES, attemptsOfWord, type RowAttempts } from '../../src/planning/plan-attempts.js';
import { readPlanRange, type PlanRecord } from '../../src/planning/plan-file.js';
import { planPathsOf, type PlanPaths } from '../../src/planning/plan-files.js';
import { rejudgeListPath } from '../../src/planning/rejudge-list.js';
import { planRequestOf, runFilePaths, type RunFilePaths } from '../helpers/plan-request.js';
import { failureLine, inputLine, successLine } from '../helpers/spec-fixtures.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-round-');
const BATCH = 7;

/** A sidecar row as an earlier invocation or a batch wrote it. */
const sidecarLine = (t: number, r: number, cls: string, more = '') =>
  `{"reward":0.0,"_ng_failure_class":"${cls}"${more},"_ng_task_index":${t},"_ng_rollout_index":${r}}`;

/** Earlier invocations' attempts of a key: none up to past the cap, some terminal (of each kind). */
function earlierRows(t: number, r: number, pick: () => number): string[] {
  const n = Math.floor(pick() * 5);
  const rows = Array.from({ length: n }, () => sidecarLine(t, r, 'judge_failed'));
  const p = pick();
  if (p < 0.08) rows.push(sidecarLine(t, r, 'timeout_exceeded', ',"_ng_failure_terminal":true'));
  else if (p < 0.12) rows.push(sidecarLine(t, r, 'eval_missing', ',"_ng_failure_terminal":true'));
  else if (p < 0.15) rows.push(sidecarLine(t, r, 'skipped', ',"_ng_failure_terminal":true'));
  else if (p < 0.18) rows.push(sidecarLine(t, r, 'judge_failed', ',"_ng_failure_terminal":true'));
  else if (p < 0.2) rows.push(sidecarLine(t, r, 'omitted', ',"_ng_omitted":true'));
  return rows;
}

type Mode = { resume?: boolean; recovery?: boolean; overwrite?: boolean; random?: boolean } & RetryRules;

/** The run's files: 90 tasks × 2 rollouts, a partial output, and the sidecar earlier invocations left. */
function runFiles(dir: string, mode: Mode, seed: number) {
  const pick = mulberry32(seed);
  const keys = Array.from({ length: 180 }, (_, i) => ({ t: Math.floor(i / 2), r: i % 2, agent: i % 3 === 0 ? 'agent_b' : 'agent_a' }));
  const files = runFilePaths(dir);
  writeFileSync(files.inputs, keys.map((k) => inputLine(k)).join('\n') + '\n');
  const shuffled = [...keys].sort(() => pick() - 0.5);
  // Recovery: --rollouts holds a few successes; its sidecar (the source) the judge failures of the rest.
  writeFileSync(
    files.rollouts,
    shuffled
      .filter((_, i) => !mode.recovery || i % 9 === 0)
      .map((k) => successLine(k))
      .join('\n') + '\n',
  );
  if (mode.recovery) {
    const failures = shuffled.filter((_, i) => i % 9 !== 0).map((k) => failureLine(k));
    writeFileSync(join(dir, 'rollouts_failures.jsonl'), failures.join('\n') + '\n');
  }
  writeFileSync(
    files.output,
    keys
      .filter((_, i) => i % 11 === 5)
      .map((k) => successLine(k))
      .join('\n') + '\n',
  );
  writeFileSync(files.sidecar, shuffled.flatMap((k) => earlierRows(k.t, k.r, pick)).join('\n') + '\n');
  return files;
}

function planRequest(files: RunFilePaths, workDir: string, mode: Mode): PlanRequest {
  return planRequestOf(files, workDir, {
    judgeFailedOnly: mode.recovery === true,
    resume: mode.resume === true,
    outputsCleared: mode.overwrite === true,
    ...(mode.random ? { order: { kind: 'random' as const, seed: 5 } } : {}),
    retryTerminalTimeouts: mode.retryTerminalTimeouts,
    retryInvalidJudgeResponses: mode.retryInvalidJudgeResponses,
  });
}

/** The reference's terminal rule, written out: an omission, else the stamp — with the flag, never for timeouts and repairable faults, always for `skipped`. */
function stops(row: Record<string, unknown>, rules: RetryRules): boolean {
  if (row._ng_omitted === true) return true;
  const cls = row._ng_failure_class as string;
  if (rules.retryTerminalTimeouts && (cls === 'timeout_exceeded' || REPAIRABLE_ENVIRONMENT_CLASSES.includes(cls))) return false;
  if (rules.retryTerminalTimeouts && cls === 'skipped') return true;
  return row._ng_failure_terminal === true;
}

/** The spec: every key's rows in the sidecar as it is now. */
function sidecarAttempts(path: string, rules: RetryRules): Map<string, RowAttempts> {
  const seen = new Map<string, RowAttempts>();
  if (!existsSync(path)) return seen;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const id = line.trim() === '' ? null : lineKeyId(line);
    if (id === null) continue;
    const a = seen.get(id) ?? { count: 0, terminal: false };
    seen.set(id, { count: a.count + 1, terminal: a.terminal || stops(JSON.parse(line) as Record<string, unknown>, rules) });
  }
  return seen;
}

const sourceLineOf = (plan: PlanSummary, rec: PlanRecord) =>
  readFileSync(plan.sourcePath).toString('utf8', rec.sourceOffset, rec.sourceOffset + rec.sourceLength);

function attemptsFile(path: string): RowAttempts[] {
  const bytes = readFileSync(path);
  return Array.from({ length: bytes.length / ATTEMPTS_BYTES }, (_, i) => attemptsOfWord(bytes.readUInt32LE(i * ATTEMPTS_BYTES)));
}

/** A plan's rows, each with its key's attempts as its attempts file says and as the sidecar says now. */
async function planRows(plan: PlanSummary, sidecar: string, rules: RetryRules) {
  const records = await readPlanRange(plan.planPath, 0, plan.rows, plan.recordBytes);
  const carried = attemptsFile(plan.attemptsPath!);
  const counted = sidecarAttempts(sidecar, rules);
  const spec = records.map((rec) => counted.get(lineKeyId(sourceLineOf(plan, rec))!) ?? { count: 0, terminal: false });
  return { records, carried, spec };
}

/** A `/verify` body a row's attempt gets; `withdrawn` only where re-judgments settle (an answer without a grade). */
function replyBody(pick: () => number, rejudgment: boolean): string {
  const p = pick();
  if (p < 0.3) return '{"reward":1.0}';
  if (p < 0.55) return '{"reward":0.0,"_ng_failure_class":"judge_failed"}';
  if (p < 0.62) return '{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_terminal":true}';
  if (p < 0.72) return '{"reward":0.0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}';
  if (p < 0.78) return '{"reward":0.0,"invalid_judge_response":true}';
  if (p < 0.82) return '{"reward":0.0,"invalid_judge_response":true,"invalid_judge_retryable":false}';
  return rejudgment ? '{"reward":null}' : '{"reward":0.0,"_ng_failure_class":"judge_failed"}';
}

/** Where a batch runs: its segment's plan, its round and number, its rows [from, to). */
interface BatchAt {
  plan: PlanSummary;
  round: number;
  batch: number;
  from: number;
  to: number;
}

/**
 * A batch: each row's reply routed as the batch routes it (a re-judgment's answer without a grade
 * is withdrawn), its sidecar rows committed, its list published as the batch publishes it.
 */
async function runBatch(
  at: BatchAt,
  run: { workDir: string; sidecar: string; rules: RetryRules; rejudgment: boolean; pick: () => number },
) {
  const cp: Checkpoint = { done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} };
  const committed: string[] = [];
  const records = await readPlanRange(at.plan.planPath, at.from, at.to, at.plan.recordBytes);
  for (const [k, rec] of records.entries()) {
    const line = sourceLineOf(at.plan, rec);
    const stamps = { task: rawField(line, '_ng_task_index')!, rollout: rawField(line, '_ng_rollout_index')! };
    const body = replyBody(run.pick, run.rejudgment);
    const rejudgment = run.rejudgment ? { opId: `op/${stamps.task}.${stamps.rollout}`, judged: line, saved: line } : undefined;
    const facts = { agent: at.plan.agents[rec.agent], planIndex: at.from + k, latencyMs: 1, throttled: 0, rejudgment };
    const routed = routeReply(
      { kind: 'ok', status: 200, body, result: JSON.parse(body) as Record<string, unknown> },
      stamps,
      facts,
      run.rules,
    );
    routed.count(cp.counts, cp);
    if (routed.target === 'sidecar') committed.push(routed.line!);
  }
  if (committed.length > 0) appendFileSync(run.sidecar, committed.join('\n') + '\n');
  const list = rejudgeListOf(cp);
  writeFileSync(rejudgeListPath(run.workDir, at.round, at.batch), JSON.stringify(list));
  return list;
}

/** What the spec keeps of the listed rows (plan order): fewer attempts than the cap now, none terminal. */
async function expectedRound(plan: PlanSummary, listed: number[], sidecar: string, rules: RetryRules, maxAttempts: number) {
  const { records, spec } = await planRows(plan, sidecar, rules);
  const kept = [...listed].sort((a, b) => a - b).filter((i) => !spec[i].terminal && spec[i].count < maxAttempts);
  return { records: kept.map((i) => records[i]), attempts: kept.map((i) => spec[i]) };
}

const MODES: Array<[string, Mode]> = [
  ['--resume', { resume: true }],
  [
    '--resume --retry-terminal-timeouts --retry-invalid-judge-responses',
    { resume: true, retryTerminalTimeouts: true, retryInvalidJudgeResponses: true },
  ],
  ['--resume --order random', { resume: true, random: true }],
  ['--judge-failed-only --append (keys at the cap and terminal ones are planned)', { recovery: true }],
  [
    '--judge-failed-only --append --retry-terminal-timeouts',
    { recovery: true, retryTerminalTimeouts: true, retryInvalidJudgeResponses: true },
  ],
  ['--overwrite (the sidecar is deleted after the plan)', { overwrite: true }],
];

describe("re-judgment planning carries each row's attempts, reading no sidecar", () => {
  it.each(MODES)('%s: every round keeps what the sidecar counts say, with the counts', async (_label, mode) => {
    const dir = tmp.freshDir();
    const files = runFiles(dir, mode, 7);
    const workDir = join(dir, 'work');
    const rules: RetryRules = {
      retryTerminalTimeouts: mode.retryTerminalTimeouts,
      retryInvalidJudgeResponses: mode.retryInvalidJudgeResponses,
    };
    const maxAttempts = 4;
    const { messages: _m, ...first } = await planInto({ ...planRequest(files, workDir, mode), maxAttempts });
    // The first plan's attempts are its keys' sidecar rows when it was made.
    const planned = await planRows(first, files.sidecar, rules);
    expect(planned.carried).toEqual(mode.overwrite ? planned.spec.map(() => ({ count: 0, terminal: false })) : planned.spec);
    if (mode.overwrite) rmSync(files.sidecar); // the outputs are opened (deleted) after the plan
    const pick = mulberry32(3);
    let segments = [{ plan: first, round: 0 }];
    let nextBatch = 0;
    let kept = 0;
    let dropped = 0;
    const seen = { withdrawn: 0, terminal: 0 };
    while (segments.length > 0) {
      const next: typeof segments = [];
      for (const seg of segments) {
        const rejudgment = seg.round > 0 || mode.recovery === true;
        const run = { workDir, sidecar: files.sidecar, rules, rejudgment, pick };
        const batches: Array<{ batch: number; listed: number[] }> = [];
        for (let from = 0; from < seg.plan.rows; from += BATCH) {
          const at = { plan: seg.plan, round: seg.round, batch: nextBatch++, from, to: Math.min(seg.plan.rows, from + BATCH) };
          const list = await runBatch(at, run);
          batches.push({ batch: at.batch, listed: list.rows });
          seen.withdrawn += list.withdrawn.length;
          seen.terminal += list.terminal.length;
        }
        // Planned in two calls (as committed, in no order), each becoming a segment of the next round.
        const shuffled = [...batches].sort(() => pick() - 0.5);
        for (const group of [shuffled.slice(0, shuffled.length >> 1), shuffled.slice(shuffled.length >> 1)]) {
          const listed = group.flatMap((b) => b.listed);
          const want = await expectedRound(seg.plan, listed, files.sidecar, rules, maxAttempts);
          const req: RoundRequest = {
            workDir,
            round: seg.round,
            batches: group.map((b) => b.batch),
            segment: next.length + 100,
            plan: seg.plan,
            maxAttempts,
          };
          const paths = planPathsOf(join(workDir, `plan-r${seg.round + 1}-s${nextBatch}-${next.length}.bin`));
          const got = await writeRoundPlan(req, paths);
          expect(got.rows).toBe(want.records.length);
          const plan: PlanSummary = {
            ...seg.plan,
            planPath: paths.plan,
            attemptsPath: paths.attempts,
            rows: got.rows,
            rowsPerAgent: got.rowsPerAgent,
          };
          expect(await readPlanRange(paths.plan, 0, got.rows, plan.recordBytes)).toEqual(want.records);
          expect(attemptsFile(paths.attempts)).toEqual(want.attempts);
          const perAgent: Record<string, number> = {};
          for (const r of want.records) perAgent[plan.agents[r.agent]] = (perAgent[plan.agents[r.agent]] ?? 0) + 1;
          expect(Object.entries(got.rowsPerAgent)).toEqual(Object.entries(perAgent)); // same counts, same key order
          kept += got.rows;
          dropped += listed.length - got.rows;
          if (got.rows > 0) next.push({ plan, round: seg.round + 1 });
        }
      }
      segments = next;
    }
    // The scenario reaches the cap, terminal rows, withdrawn re-judgments and several rounds; recovery
    // plans keys already at the cap or terminal.
    expect(kept).toBeGreaterThan(20);
    expect(dropped).toBeGreaterThan(10);
    expect(seen.withdrawn).toBeGreaterThan(3);
    expect(seen.terminal).toBeGreaterThan(3);
    if (mode.recovery) expect(planned.spec.filter((a) => a.terminal).length).toBeGreaterThan(3);
    if (mode.recovery) expect(planned.spec.filter((a) => a.count >= maxAttempts).length).toBeGreaterThan(3);
    if (mode.resume && mode.retryTerminalTimeouts) expect(planned.spec.filter((a) => a.count > 0).length).toBeGreaterThan(10);
  });
});

/** A plan made by the plan phase, and one batch of its first rows that judge-failed (two rows withdrawn, one terminal). */
async function oneRound(n = 20) {
  const dir = tmp.freshDir();
  const files = runFiles(dir, { resume: true }, 11);
  const workDir = join(dir, 'work');
  const { messages: _m, ...plan } = await planInto(planRequest(files, workDir, { resume: true }));
  const rows = Array.from({ length: Math.min(n, plan.rows) }, (_, i) => i);
  writeFileSync(rejudgeListPath(workDir, 0, 0), JSON.stringify({ rows, withdrawn: [1, 2], terminal: [3] }));
  const req: RoundRequest = { workDir, round: 0, batches: [0, 1], segment: 1, plan, maxAttempts: 3 };
  return { req, rows, paths: (name: string): PlanPaths => planPathsOf(join(workDir, `${name}.bin`)) };
}

describe('writeRoundPlan refusals and edges', () => {
  it('a judge-failed row whose source line changed since the plan stops the round, naming the file and line', async () => {
    const { req, paths } = await oneRound();
    const rec = (await readPlanRange(req.plan.planPath, 4, 5, req.plan.recordBytes))[0];
    const source = readFileSync(req.plan.sourcePath);
    source[rec.sourceOffset + 5] ^= 1; // one changed byte in a listed row
    writeFileSync(req.plan.sourcePath, source);
    const err = await writeRoundPlan(req, paths('r2')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputChangedError);
    expect((err as Error).message).toContain(
      `'${req.plan.sourcePath}' changed after this run planned it: line ${rec.sourceLine} is not the row that was planned`,
    );
  });

  it('a plan of another version (before digests, or without its attempts) or a list of another version is refused, not misread', async () => {
    const { req, paths } = await oneRound();
    for (const recordBytes of [undefined, 40]) {
      const err = await writeRoundPlan({ ...req, plan: { ...req.plan, recordBytes } }, paths('r2')).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/^this run's plan was written by another version of reverify .*--resume/);
    }
    const { attemptsPath: _a, ...noAttempts } = req.plan;
    const err = await writeRoundPlan({ ...req, plan: noAttempts }, paths('r2')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /^this run's plan was written by another version of reverify \(without its rows' attempts\).*--resume/,
    );
    writeFileSync(rejudgeListPath(req.workDir, 0, 1), JSON.stringify([25]));
    expect(((await writeRoundPlan(req, paths('r2')).catch((e: unknown) => e)) as Error).message).toMatch(
      /r0-b1\.rejudge\.json' was written by another version of reverify/,
    );
  });

  it('withdrawn rows keep their count, a terminal one is dropped, the others count one more', async () => {
    const { req, rows, paths } = await oneRound();
    const before = attemptsFile(req.plan.attemptsPath!);
    const got = await writeRoundPlan({ ...req, maxAttempts: 1000 }, paths('r2'));
    expect(got.rows).toBe(rows.length - 1);
    const after = rows.filter((i) => i !== 3).map((i) => ({ count: before[i].count + (i === 1 || i === 2 ? 0 : 1), terminal: false }));
    expect(attemptsFile(paths('r2').attempts)).toEqual(after);
  });

  it('no judge-failed rows: an empty plan', async () => {
    const { req, paths } = await oneRound();
    expect(await writeRoundPlan({ ...req, round: 5 }, paths('r6'))).toEqual({ rows: 0, rowsPerAgent: {} });
    expect(readFileSync(paths('r6').plan).length).toBe(0);
    expect(readFileSync(paths('r6').attempts).length).toBe(0);
  });
});
