import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DROPPED_FROM_SCORE } from '../../src/contract/dropped-row.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { operationIdOf } from '../helpers/operation-ids.js';
import { keysOf, readRows, runInProcess as run, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('rejudge');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

/**
 * A stateless resources server whose judge fails a key's first `failures(task)` attempts, then
 * grades it 1.0 — so the outcome of every attempt is known in advance, whatever the order.
 */
async function flakyJudge(failures: (task: number) => number): Promise<number> {
  const judge = await server({
    aggregate: emptyMetrics,
    verify: (row, attempt) => {
      const n = attempt + 1;
      if (n <= failures(row._ng_task_index as number)) {
        return reward(0.0, { _ng_failure_class: 'judge_failed', _ng_failure_judge_error: `JudgeError: attempt ${n}` });
      }
      return reward(1.0, { attempt: n });
    },
  });
  return judge.port;
}

const sorted = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).sort();
/** Task t fails t % 4 times: 0 (never), 1, 2 (succeeds on the 3rd and last attempt), 3 (never succeeds). */
const failuresOf = (t: number) => t % 4;

describe('automatic re-judgment rounds', () => {
  it('re-judges judge failures until the attempt cap, leaving exactly one sidecar row per failed attempt', async () => {
    const dir = tempDir();
    const port = await flakyJudge(failuresOf);
    const d = await sampleRun(dir, port, { tasks: 16, repeats: 2 });
    const { result, lines, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      rejudgeDelayMs: 0,
      batchSize: 5,
    });
    expect(error).toBeNull();
    expect(result!.rounds).toBe(3);
    const main = readRows(d.output);
    const side = readRows(join(dir, 'out_failures.jsonl'));
    // Tasks failing 0, 1 or 2 times end in the main output once; tasks failing 3 times never do.
    expect(keysOf(main).sort()).toEqual(keysOf(readRows(d.rolloutsPath).filter((r) => (r._ng_task_index as number) % 4 !== 3)).sort());
    expect(new Set(keysOf(main)).size).toBe(main.length);
    const perKey = new Map<string, number>();
    for (const k of keysOf(side)) perKey.set(k, (perKey.get(k) ?? 0) + 1);
    for (const [k, n] of perKey) expect(n).toBe(Math.min(3, failuresOf(Number(k.split(':')[0]))));
    // Rounds 2 and 3 announced once each (their later segments join them silently).
    const announced = lines.filter((l) => l.startsWith('Re-judging:'));
    expect(announced.map((l) => /round (\d) \(of at most 3\)/.exec(l)?.[1])).toEqual(['2', '3']);
    expect(
      announced.every((l) =>
        /^Re-judging: \d+ row\(s\) judge-failed in round [12] so far( \(\d+ of them may still be attempted\))?; round [23] \(of at most 3\) (starts now|starts in \d+s), each failure judged again at least \d+s after it$/.test(
          l,
        ),
      ),
      announced.join('\n'),
    ).toBe(true);

    // Every round is its own activities in the history, with a readable summary.
    const history = await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory();
    const summaries = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => Buffer.from(e.userMetadata?.summary?.data ?? new Uint8Array()).toString());
    expect(summaries.some((s) => s.includes('re-judge round 2: verify rows'))).toBe(true);
    expect(summaries.some((s) => s.includes('re-judge round 3: verify rows'))).toBe(true);
    expect(summaries.some((s) => s.includes('plan re-judgment round 3'))).toBe(true);
  });

  it("waits the delay from a row's judge failure, not from the end of its round's slowest answer", async () => {
    // One batch: key 0:0 judge-fails at once on its first attempt; key 3:1 answers after 3 s.
    const asked = new Map<string, number[]>();
    const judge = await server({
      aggregate: emptyMetrics,
      verify: (row, attempt) => {
        const key = `${row._ng_task_index as number}:${row._ng_rollout_index as number}`;
        asked.set(key, [...(asked.get(key) ?? []), Date.now()]);
        if (key === '0:0' && attempt === 0) return reward(0.0, { _ng_failure_class: 'judge_failed' });
        return key === '3:1' ? { ...reward(1.0), delayMs: 3000 } : reward(1.0);
      },
    });
    const dir = tempDir();
    const d = await sampleRun(dir, judge.port, { tasks: 4, repeats: 2 });
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      rejudgeDelayMs: 2000,
      batchSize: 8,
    });
    expect(error).toBeNull();
    expect(result!.rounds).toBe(2);
    const [failedAt, rejudgedAt] = asked.get('0:0')!;
    // The delay is kept: the re-judgment is asked at least 2 s after the failure was answered.
    expect(rejudgedAt - failedAt).toBeGreaterThanOrEqual(2000);
    // ...counted from the failure: the batch returned ≥ 2 s after it (its slowest row), so no time
    // is left to wait once it has ended (no timer); from the batch's end it would be ≈ 2 s.
    const events = (await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory()).events ?? [];
    const timers = events.flatMap((e) => (e.timerStartedEventAttributes ? [e.timerStartedEventAttributes.startToFireTimeout] : []));
    expect(timers).toEqual([]);
  });

  it('ends counting rollouts, not attempts: one dropped line per rollout still missing at the end, then the coverage report', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, await flakyJudge(failuresOf), { tasks: 16, repeats: 2 });
    const { error, lines } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      rejudgeDelayMs: 0,
      batchSize: 5,
    });
    expect(error).toBeNull();
    const sidecar = join(dir, 'out_failures.jsonl');
    // 32 keys; tasks failing 1, 2, 3 times (8 keys each) leave 8 + 16 + 24 sidecar rows; the 8 keys
    // of tasks failing 3 times are still missing after the 3 rounds (32 + 24 + 16 attempts): one
    // line each, from its last attempt, after the rounds and before the summary.
    const dropped = lines.filter((l) => l.startsWith(DROPPED_FROM_SCORE));
    expect(dropped).toHaveLength(8);
    expect(dropped.every((l) => / class=judge_failed error=$/.test(l))).toBe(true);
    const keyOfLine = (l: string) =>
      /"_ng_rollout_index": (\d+), "_ng_task_index": (\d+), "agent_name": "\w+"}/.exec(l)!.slice(1).reverse().join(':');
    const missing = keysOf(readRows(d.rolloutsPath).filter((r) => (r._ng_task_index as number) % 4 === 3));
    expect(dropped.map(keyOfLine).sort()).toEqual(missing.sort());
    const summaryAt = lines.findIndex((l) => l.startsWith('Rollouts: '));
    expect(lines.indexOf(dropped[0])).toBeGreaterThan(lines.map((l) => l.startsWith('Re-judging:')).lastIndexOf(true));
    expect(lines.lastIndexOf(dropped[dropped.length - 1])).toBeLessThan(summaryAt);
    expect(lines[summaryAt]).toBe(
      'Rollouts: 32 planned: 24 scored, 8 still missing from the score after 3 rounds, 0 not persisted (72 attempts, 48 of them in the failures sidecar)',
    );
    expect(lines).toContain(`Rollouts missing from the score: 8 of 32 materialized (48 judge_failed routed this run; see ${sidecar})`);
    expect(lines).toContain('Metrics cover: 24 of 32 rollouts');
    // A run whose judge failures a later round scores prints none, and no coverage report.
    const clean = await sampleRun(join(dir, 'clean'), await flakyJudge(() => 1), { tasks: 4, repeats: 1 });
    const again = await run({
      inputs: clean.inputsPath,
      rollouts: clean.rolloutsPath,
      output: clean.output,
      configs: [clean.config],
      rejudgeDelayMs: 0,
    });
    expect(again.lines).toContain(
      'Rollouts: 4 planned: 4 scored, 0 still missing from the score after 2 rounds, 0 not persisted (8 attempts, 4 of them in the failures sidecar)',
    );
    expect(again.lines.filter((l) => l.startsWith(DROPPED_FROM_SCORE))).toHaveLength(0);
    expect(again.lines.some((l) => l.startsWith('Rollouts missing from the score'))).toBe(false);
  });

  it('leaves the same files as a NeMo Gym single pass followed by repeated --resume runs', async () => {
    const dir = tempDir();
    const a = await sampleRun(join(dir, 'rounds'), await flakyJudge(failuresOf), { tasks: 12, repeats: 2 });
    const b = await sampleRun(join(dir, 'resumes'), await flakyJudge(failuresOf), { tasks: 12, repeats: 2 });
    expect(
      (await run({ inputs: a.inputsPath, rollouts: a.rolloutsPath, output: a.output, configs: [a.config], rejudgeDelayMs: 0 })).error,
    ).toBeNull();
    // NeMo Gym: one pass, then `--resume` by hand until nothing is left (the cap: 3, from the environment).
    const base = { inputs: b.inputsPath, rollouts: b.rolloutsPath, output: b.output, configs: [b.config], rejudge: false };
    expect((await run(base)).error).toBeNull();
    for (let i = 0; i < 3; i++) expect((await run({ ...base, resume: true })).error).toBeNull();
    // The same rows, but that a re-judgment round's settled row carries its operation id and the
    // saved answer it was judged on (this judge does not echo `response`).
    const responses = new Map(readRows(a.rolloutsPath).map((r) => [`${r._ng_task_index}:${r._ng_rollout_index}`, r.response]));
    const firstPass = new Set(sorted(b.output));
    const plain = sorted(a.output).map((line) => {
      const row = JSON.parse(line) as Record<string, unknown>;
      const task = row._ng_task_index as number;
      const round = failuresOf(task) + 1; // a task that fails n times is settled in round n + 1
      if (round === 1) {
        expect(operationIdOf(line)).toBeUndefined();
        expect(firstPass.has(line)).toBe(true); // byte for byte
        return row;
      }
      expect(operationIdOf(line)).toMatch(new RegExp(`/r${round}/${task}\\.\\d+$`));
      expect(row.response).toEqual(responses.get(`${task}:${row._ng_rollout_index}`));
      delete row._ng_operation_id;
      delete row.response;
      return row;
    });
    expect(plain).toEqual(sorted(b.output).map((l) => JSON.parse(l) as unknown));
    expect(sorted(join(dir, 'rounds', 'out_failures.jsonl'))).toEqual(sorted(join(dir, 'resumes', 'out_failures.jsonl')));
  });

  it('--max-attempts 1 is a single pass: judge failures stay in the sidecar, no round follows', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, await flakyJudge(failuresOf), { tasks: 8, repeats: 1 });
    const { result, lines } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      maxAttempts: 1,
    });
    expect(result!.rounds).toBe(1);
    expect(readRows(join(dir, 'out_failures.jsonl'))).toHaveLength(6);
    expect(lines.some((l) => l.startsWith('Re-judging'))).toBe(false);
  });
});

describe('--resume', () => {
  it('prints the spec summary and verifies only what is missing', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, await flakyJudge(() => 0), { tasks: 10, repeats: 1 });
    const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], maxAttempts: 1 };
    expect((await run({ ...base, limit: 4 })).error).toBeNull();
    const resumed = await run({ ...base, resume: true });
    expect(resumed.error).toBeNull();
    expect(resumed.lines).toContain(
      [
        'Resumed from cache. Found:',
        '- 10 total rows to be re-verified',
        '- 4 rows already done (in main jsonl)',
        '- 0 sidecar-terminal (for example skipped) → not retried',
        '- 0 hit max_attempts → not retried',
        '- 6 rows that still need to be run',
      ].join('\n'),
    );
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(10);
    expect(new Set(keys).size).toBe(10);
  });

  it('a cut-off last line (a crash mid-write) is reported with file:line; --repair-truncated cuts it and continues', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, await flakyJudge(() => 0), { tasks: 6, repeats: 1 });
    const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], maxAttempts: 1 };
    expect((await run({ ...base, limit: 3 })).error).toBeNull();
    const whole = readFileSync(d.output, 'utf8');
    const cut = readRows(d.rolloutsPath)[3];
    appendFileSync(d.output, `{"reward":1.0,"_ng_task_index":${cut._ng_task_index},"_ng_rollo`);
    const refused = await run({ ...base, resume: true });
    expect(refused.error?.code).toBe(1);
    expect(refused.error?.line).toContain(`${d.output}:4: the last line is cut off`);
    expect(refused.error?.line).toContain('--repair-truncated');
    expect(readFileSync(d.output, 'utf8').startsWith(whole)).toBe(true);

    const repaired = await run({ ...base, resume: true, repairTruncated: true });
    expect(repaired.error).toBeNull();
    expect(repaired.lines.some((l) => l.startsWith(`Cut the partial last line of ${d.output}`))).toBe(true);
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(6);
    expect(new Set(keys).size).toBe(6);
  });

  it('resumes an output written by NeMo Gym (orjson floats, huge integers) without changing its bytes', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, await flakyJudge(() => 0), { tasks: 4, repeats: 1 });
    const first = readRows(d.rolloutsPath)[0];
    const gymLine = `{"reward":1.0,"big":12345678901234567890,"_ng_task_index":${first._ng_task_index},"_ng_rollout_index":${first._ng_rollout_index},"agent_ref":{"name":"${(first.agent_ref as { name: string }).name}"}}\n`;
    writeFileSync(d.output, gymLine);
    writeFileSync(join(dir, 'out_failures.jsonl'), '');
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      resume: true,
      maxAttempts: 1,
    });
    expect(error).toBeNull();
    expect(result!.planned).toBe(3);
    expect(readFileSync(d.output, 'utf8').startsWith(gymLine)).toBe(true);
    expect(readRows(d.output)).toHaveLength(4);
  });
});
