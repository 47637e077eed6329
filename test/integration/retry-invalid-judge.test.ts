/**
 * `--retry-invalid-judge-responses` end to end (real CLI, workflow and reference resources server):
 * invalid verdicts go to the sidecar as `judge_invalid` (re-judged by the rounds up to the cap) or
 * terminal `permanent`, and the rounds leave what a single pass and repeated `--resume` leave.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ReferenceServerOptions } from '../../src/reference-server/options.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { keys, lines, rows, tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { operationIdOf, withoutOperationId } from '../helpers/operation-ids.js';

useSharedTemporal('retry-invalid-judge');
const server = closedAfterEach(startReferenceServer);

/** Row 1 is invalid on its first grading only, row 2 on every grading, row 3 permanently. */
const JUDGE: Partial<ReferenceServerOptions> = { invalidJudge: ['1:0@1', '2:0'], permanentInvalidJudge: ['3:0'] };

async function fixtureRun(judge: Partial<ReferenceServerOptions>, extra: Record<string, unknown>) {
  const rs = await server({ port: 0, ...judge });
  const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
  const run = (more: Record<string, unknown> = {}) =>
    runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [`rs=${rs.url}`], ...extra, ...more });
  return { f, rs, run };
}

const sorted = (path: string) => lines(path).sort();
const count = (list: string[]) => list.reduce<Record<string, number>>((m, k) => ({ ...m, [k]: (m[k] ?? 0) + 1 }), {});

describe('--retry-invalid-judge-responses', () => {
  it('invalid verdicts become judge_invalid sidecar rows re-judged up to the cap, or terminal `permanent` ones', async () => {
    const { f, run } = await fixtureRun(JUDGE, { retryInvalidJudgeResponses: true, maxAttempts: 3, rejudgeDelayMs: 0 });
    const { result, error } = await run();
    expect(error).toBeNull();
    expect(result!.rounds).toBe(3);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '4:0', '5:0']);
    const side = rows(f.outputSidecar);
    expect(count(keys(side))).toEqual({ '1:0': 1, '2:0': 3, '3:0': 1 });
    for (const r of side.filter((r) => r._ng_task_index !== 3)) {
      expect(r).toMatchObject({
        reward: 0,
        invalid_judge_response: true,
        _ng_failure_class: 'judge_invalid',
        agent_ref: { name: 'agent_a' },
      });
      expect(r).not.toHaveProperty('_ng_failure_terminal');
    }
    expect(side.find((r) => r._ng_task_index === 3)).toMatchObject({
      invalid_judge_retryable: false,
      _ng_failure_class: 'permanent',
      _ng_failure_terminal: true,
    });
    // The class follows the server's fields, then the stamps (0.7.0 normalizes before stamping).
    const line = lines(f.outputSidecar).find((l) => l.includes('"permanent"'))!;
    expect(line).toMatch(/"invalid_judge_retryable":false,"_ng_failure_class":"permanent","_ng_failure_terminal":true,"_ng_task_index":3,/);
  });

  it('without it, invalid verdicts are scored rows of the main output and the sidecar stays empty', async () => {
    const { f, run } = await fixtureRun(JUDGE, { rejudgeDelayMs: 0, maxAttempts: 3 });
    const { result, error } = await run();
    expect(error).toBeNull();
    expect(result!.rounds).toBe(1);
    const main = rows(f.output);
    expect(keys(main).sort()).toEqual(['0:0', '1:0', '2:0', '3:0', '4:0', '5:0']);
    expect(main.filter((r) => r.invalid_judge_response === true).map((r) => r._ng_task_index)).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(readFileSync(f.outputSidecar, 'utf8')).toBe('');
  });

  it('the rounds leave the files of a single pass followed by repeated --resume --retry-invalid-judge-responses', async () => {
    const rounds = await fixtureRun(JUDGE, { retryInvalidJudgeResponses: true, maxAttempts: 3, rejudgeDelayMs: 0 });
    expect((await rounds.run()).error).toBeNull();
    const resumes = await fixtureRun(JUDGE, { retryInvalidJudgeResponses: true, maxAttempts: 3, rejudge: false });
    expect((await resumes.run()).error).toBeNull();
    const resumed = [];
    for (let i = 0; i < 3; i++) resumed.push(await resumes.run({ resume: true }));
    expect(resumed.map((r) => r.error)).toEqual([null, null, null]);
    // The permanent row is terminal for --resume: never sent again.
    expect(resumed[0].lines.join('\n')).toContain('- 1 sidecar-terminal (for example skipped) → not retried');
    // The same rows, but that the rounds' settled re-judgments carry their operation id.
    expect(sorted(rounds.f.output).map(withoutOperationId)).toEqual(sorted(resumes.f.output));
    expect(sorted(rounds.f.output).some((l) => operationIdOf(l) !== undefined)).toBe(true);
    expect(sorted(rounds.f.outputSidecar)).toEqual(sorted(resumes.f.outputSidecar));
  });
});
