/**
 * The plan phase's key join on disk: with a tiny sort budget (many run files, merged in levels)
 * the plan, counts and messages are the same bytes as when everything fits in memory, and the
 * first bad row in file order is the one reported. Semantics are checked end to end in the §6/§7
 * tests; this pins the disk path to the in-memory one.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { planRun, type PlanOutcome, type PlanRequest } from '../../activities/plan-run.js';
import { lineKeyId } from '../../src/contract/row-key.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { ATTEMPTS_BYTES, attemptsOfWord, type RowAttempts } from '../../src/planning/plan-attempts.js';
import { readPlanRange } from '../../src/planning/plan-file.js';
import { planRequestOf, runFilePaths } from '../helpers/plan-request.js';
import { failureLine, inputLine, successLine } from '../helpers/spec-fixtures.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-plan-run-');

/**
 * 400 tasks × 2 rollouts: duplicate inputs (the later, agent_b, wins); shuffled rollouts with
 * repeats and blank lines; a rollouts sidecar of judge failures (some twice, some also succeeded);
 * a partial output and an output sidecar (maxed out and terminal keys).
 */
function scenario(dir: string, seed: number) {
  const r = mulberry32(seed);
  const keys: Array<{ t: number; r: number }> = [];
  for (let t = 0; t < 400; t++) for (let k = 0; k < 2; k++) keys.push({ t, r: k });
  const inputs = keys.map((k) => inputLine(k));
  for (const k of keys) if (r() < 0.1) inputs.push(inputLine({ ...k, agent: 'agent_b' }));
  const judged = new Set(keys.filter(() => r() < 0.3));
  const rollouts: string[] = [];
  // Most judge-failed keys have no success in --rollouts (recovery sends them); a few do.
  for (const k of [...keys].filter((k) => !judged.has(k) || r() < 0.1).sort(() => r() - 0.5)) {
    rollouts.push(successLine(k));
    if (r() < 0.05) rollouts.push(successLine(k, '0.0'));
    if (r() < 0.02) rollouts.push('');
  }
  const failures = [...judged].flatMap((k) => (r() < 0.2 ? [failureLine(k), failureLine(k)] : [failureLine(k)]));
  failures.push(failureLine({ t: 999 }, 'timeout_exceeded', { terminal: true }));
  const output = keys.filter(() => r() < 0.25).map((k) => successLine(k));
  const sidecar = keys
    .filter(() => r() < 0.2)
    .flatMap((k) =>
      r() < 0.3 ? [failureLine(k), failureLine(k), failureLine(k)] : [failureLine(k, 'timeout_exceeded', { terminal: r() < 0.5 })],
    );
  const files = runFilePaths(dir);
  writeFileSync(files.inputs, inputs.join('\n') + '\n');
  writeFileSync(files.rollouts, rollouts.join('\n') + '\n');
  writeFileSync(join(dir, 'rollouts_failures.jsonl'), failures.join('\n') + '\n');
  writeFileSync(files.output, output.join('\n') + '\n');
  writeFileSync(files.sidecar, sidecar.join('\n') + '\n');
  return files;
}

async function plan(req: PlanRequest) {
  const outcome: PlanOutcome = await new MockActivityEnvironment().run(planRun, req);
  const bytes = readFileSync(outcome.planPath);
  const attempts = readFileSync(outcome.attemptsPath!);
  return {
    outcome: { ...outcome, planPath: '', attemptsPath: '', sourcePath: outcome.sourcePath },
    bytes,
    attempts,
    left: readdirSync(req.workDir).sort(),
  };
}

async function planError(req: PlanRequest): Promise<string> {
  try {
    await new MockActivityEnvironment().run(planRun, req);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the plan phase accepted bad input');
}

describe('plan phase: the key join on disk equals the join in memory', () => {
  it.each([
    ['a fresh run', {}],
    ['--resume', { resume: true }],
    ['--resume with --limit 500', { resume: true, limit: 500 }],
    ['--judge-failed-only', { judgeFailedOnly: true }],
    ['--judge-failed-only --resume --limit 40', { judgeFailedOnly: true, resume: true, limit: 40 }],
  ])('%s', async (_label, over: Partial<PlanRequest>) => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 11);
    const memory = await plan(planRequestOf(files, join(dir, 'w-memory'), over));
    const disk = await plan(planRequestOf(files, join(dir, 'w-disk'), { ...over, sortMaxRecords: 7 }));
    expect(memory.outcome.rows).toBeGreaterThan(0);
    expect(disk.outcome).toEqual(memory.outcome);
    expect(disk.bytes.equals(memory.bytes)).toBe(true);
    expect(disk.attempts.equals(memory.attempts)).toBe(true);
    // Only the plan, its attempts and its summary remain: no run files, no verdicts.
    expect(disk.left).toEqual(['plan.attempts.bin', 'plan.bin', 'plan.json']);
  });

  it('reports the first bad row in file order, whatever the key order, and none past --limit', async () => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 5);
    const lines = readFileSync(files.rollouts, 'utf8').split('\n');
    lines.splice(30, 0, successLine({ t: 5000 })); // line 31: no materialized input
    lines.splice(60, 0, '{"not json'); // line 61: malformed
    lines.splice(90, 0, '{"_ng_task_index":1}'); // line 91: a shape problem
    writeFileSync(files.rollouts, lines.join('\n'));
    for (const sortMaxRecords of [undefined, 3]) {
      const req = (over: Partial<PlanRequest>) =>
        planRequestOf(files, join(dir, `w${sortMaxRecords}-${Math.random()}`), { sortMaxRecords, ...over });
      expect(await planError(req({}))).toMatch(/rollouts\.jsonl:31: No matching materialized input row found for rollout row \(5000, 0\)/);
      expect(await planError(req({ limit: 50 }))).toMatch(/rollouts\.jsonl:31: No matching/);
      // Non-blank lines before line 31: a limit of one more reaches it, a limit of exactly that does not.
      const before31 = lines.slice(0, 30).filter((l) => l.trim()).length;
      expect(await planError(req({ limit: before31 + 1 }))).toMatch(/:31: No matching/);
      await expect(plan(req({ limit: before31 }))).resolves.toBeDefined();
      lines.splice(30, 1, successLine({ t: 1, r: 1 }));
      writeFileSync(files.rollouts, lines.join('\n'));
      expect(await planError(req({}))).toMatch(/rollouts\.jsonl:61: malformed JSON/);
      lines.splice(30, 1, successLine({ t: 5000 }));
      writeFileSync(files.rollouts, lines.join('\n'));
    }
  });
});

describe("plan phase: each planned row's attempts", () => {
  /** The spec: every key's rows in the output sidecar, terminal when stamped (no retry rules). */
  function sidecarCounts(path: string): Map<string, RowAttempts> {
    const seen = new Map<string, RowAttempts>();
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const id = line.trim() === '' ? null : lineKeyId(line);
      if (id === null) continue;
      const a = seen.get(id) ?? { count: 0, terminal: false };
      seen.set(id, { count: a.count + 1, terminal: a.terminal || line.includes('"_ng_failure_terminal":true') });
    }
    return seen;
  }

  it.each([
    ['--resume', { resume: true }],
    ['--resume --order random, sorted on disk', { resume: true, order: { kind: 'random' as const, seed: 9 }, sortMaxRecords: 7 }],
    ['--judge-failed-only (rows at the cap and terminal are planned)', { judgeFailedOnly: true }],
    ['--judge-failed-only --resume --limit 150', { judgeFailedOnly: true, resume: true, limit: 150 }],
  ])("%s: are its key's sidecar rows when it was planned", async (_label, over: Partial<PlanRequest>) => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 11);
    const { outcome, attempts } = await plan(planRequestOf(files, join(dir, 'w'), over));
    const records = await readPlanRange(join(dir, 'w', 'plan.bin'), 0, outcome.rows, outcome.recordBytes);
    const source = readFileSync(outcome.sourcePath);
    const counts = sidecarCounts(files.sidecar);
    const want = records.map((r) => {
      const id = lineKeyId(source.toString('utf8', r.sourceOffset, r.sourceOffset + r.sourceLength))!;
      return counts.get(id) ?? { count: 0, terminal: false };
    });
    const got = records.map((_, i) => attemptsOfWord(attempts.readUInt32LE(i * ATTEMPTS_BYTES)));
    expect(attempts.length).toBe(records.length * ATTEMPTS_BYTES);
    expect(got).toEqual(want);
    expect(want.filter((a) => a.count > 0).length).toBeGreaterThan(over.limit ? 2 : 10);
    // Recovery plans whatever the sidecar says: a key at the cap, or with a terminal row, is planned with it.
    if (over.judgeFailedOnly && !over.resume) expect(want.some((a) => a.terminal) && want.some((a) => a.count >= 3)).toBe(true);
  });

  it('--overwrite: none (the sidecar is deleted once the plan is made)', async () => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 11);
    const { outcome, attempts } = await plan(planRequestOf(files, join(dir, 'w'), { outputsCleared: true }));
    expect(outcome.rows).toBeGreaterThan(0);
    expect(attempts.equals(Buffer.alloc(outcome.rows * ATTEMPTS_BYTES))).toBe(true);
  });
});

describe('plan phase: a byte order mark', () => {
  it.each(['inputs', 'rollouts'] as const)('at the start of --%s is named as such, with what to do', async (which) => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 3);
    writeFileSync(files[which], '\uFEFF' + readFileSync(files[which], 'utf8'));
    const message = await planError(planRequestOf(files, join(dir, 'w'), {}));
    expect(message).toBe(
      `${files[which]}:1: the file starts with a UTF-8 byte order mark (BOM), which is not JSON; save it as UTF-8 without a BOM`,
    );
  });
});

describe('plan phase under the retry rules', () => {
  /** Keys 0..7 to verify; the output sidecar holds one terminal row of a different class for keys 1..5. */
  function terminalScenario(dir: string) {
    const keys = Array.from({ length: 8 }, (_, t) => ({ t }));
    const files = runFilePaths(dir);
    writeFileSync(files.inputs, keys.map((k) => inputLine(k)).join('\n') + '\n');
    writeFileSync(files.rollouts, keys.map((k) => successLine(k)).join('\n') + '\n');
    writeFileSync(files.output, successLine({ t: 0 }) + '\n');
    const classes = ['timeout_exceeded', 'reference_missing', 'transport_ineligible', 'skipped', 'verify_rejected'];
    writeFileSync(files.sidecar, classes.map((cls, i) => failureLine({ t: i + 1 }, cls, { terminal: true })).join('\n') + '\n');
    return files;
  }

  it('--resume --retry-terminal-timeouts plans terminal timeouts and repairable faults again, never skipped or other terminal rows', async () => {
    const dir = tmp.freshDir();
    const files = terminalScenario(dir);
    const without = await plan(planRequestOf(files, join(dir, 'w0'), { resume: true }));
    const withFlag = await plan(planRequestOf(files, join(dir, 'w1'), { resume: true, retryTerminalTimeouts: true }));
    expect(without.outcome.rows).toBe(2); // keys 6, 7
    expect(withFlag.outcome.rows).toBe(5); // keys 1, 2, 3, 6, 7
    expect(without.outcome.messages.join('\n')).toContain('- 5 sidecar-terminal (for example skipped) → not retried');
    expect(withFlag.outcome.messages.join('\n')).toContain('- 2 sidecar-terminal (for example skipped) → not retried');
  });

  it('--judge-failed-only recovers judge_invalid rows only with --retry-invalid-judge-responses', async () => {
    const dir = tmp.freshDir();
    const files = scenario(dir, 3);
    const lines = [failureLine({ t: 5000 }, 'judge_invalid'), failureLine({ t: 1, r: 1 }, 'permanent', { terminal: true })];
    writeFileSync(
      join(dir, 'rollouts_failures.jsonl'),
      readFileSync(join(dir, 'rollouts_failures.jsonl'), 'utf8') + lines.join('\n') + '\n',
    );
    const base = await plan(planRequestOf(files, join(dir, 'w0'), { judgeFailedOnly: true }));
    // Key (5000, 0) has no materialized input: planning it at all stops the run, naming it.
    const err = await planError(planRequestOf(files, join(dir, 'w1'), { judgeFailedOnly: true, retryInvalidJudgeResponses: true }));
    expect(base.outcome.rows).toBeGreaterThan(0);
    expect(err).toMatch(/rollouts_failures\.jsonl:\d+: No matching materialized input row found for rollout row \(5000, 0\)/);
  });
});

describe('plan phase: scanning big files on a second thread changes nothing', () => {
  /** The scenario's rows with a `pad` member of about 14 KB first: two or three 4 MiB reads per file. */
  function bigScenario(dir: string) {
    const files = scenario(dir, 23);
    for (const path of [files.inputs, files.rollouts]) {
      const lines = readFileSync(path, 'utf8').split('\n');
      const pad = (l: string, i: number) => (l.startsWith('{') ? `{"pad":"${'x'.repeat(12_000 + (i % 13) * 300)}",${l.slice(1)}` : l);
      writeFileSync(path, lines.map(pad).join('\n'));
    }
    return files;
  }

  it.each([
    ['a fresh run', {}],
    ['--resume --limit 500', { resume: true, limit: 500 }],
  ])('%s', async (_label, over: Partial<PlanRequest>) => {
    const dir = tmp.freshDir();
    const files = bigScenario(dir);
    const one = await plan(planRequestOf(files, join(dir, 'w-one'), { ...over, scanAheadMinBytes: Infinity }));
    const two = await plan(planRequestOf(files, join(dir, 'w-two'), { ...over, scanAheadMinBytes: 0 }));
    expect(one.outcome.rows).toBeGreaterThan(0);
    expect(two.outcome).toEqual(one.outcome);
    expect(two.bytes.equals(one.bytes)).toBe(true);
  });

  it('reports the same first bad row', async () => {
    const dir = tmp.freshDir();
    const files = bigScenario(dir);
    const lines = readFileSync(files.rollouts, 'utf8').split('\n');
    expect(statSync(files.rollouts).size).toBeGreaterThan(6 << 20);
    lines.splice(450, 0, '{"_ng_task_index":1, "oops"'); // in the file's second read (the thread's)
    writeFileSync(files.rollouts, lines.join('\n'));
    const inputs = readFileSync(files.inputs, 'utf8').split('\n');
    const message = (minBytes: number) => planError(planRequestOf(files, join(dir, `w${minBytes}`), { scanAheadMinBytes: minBytes }));
    expect(await message(0)).toBe(await message(Infinity));
    expect(await message(0)).toMatch(/rollouts\.jsonl:451: malformed JSON/);
    inputs.splice(600, 1, inputs[600].replace('"agent_a"', '"agent_unknown"'));
    writeFileSync(files.inputs, inputs.join('\n'));
    expect(await message(0)).toBe(await message(Infinity));
    expect(await message(0)).toMatch(/inputs\.jsonl:601/);
  });
});
