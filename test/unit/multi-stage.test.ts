import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recoverySources, refuseMultiStageRecovery } from '../../src/run-checks/multi-stage.js';
import { ConfigError } from '../../src/contract/errors.js';
import { refusesRecovery } from '../../src/contract/multi-stage.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-multi-stage-');

describe('NeMo Gym 0.7.0: --judge-failed-only refuses multi-stage rows (stage_index)', () => {
  it('a row with a top-level stage_index refuses, whatever its value; nested or absent does not', () => {
    expect(refusesRecovery('{"_ng_failure_class":"judge_failed","stage_index":1}', false)).toBe(true);
    expect(refusesRecovery('{"stage_index":null}', false)).toBe(true);
    expect(refusesRecovery('{"st\\u0061ge_index":0}', false)).toBe(true);
    expect(refusesRecovery('{"meta":{"stage_index":1}}', false)).toBe(false);
    expect(refusesRecovery('{"stage":1,"text":"\\u00e9"}', false)).toBe(false);
    expect(refusesRecovery('{"stage_index":1', false)).toBe(false); // malformed: the plan reports it
  });

  it('in --rollouts (retry_invalid_judge_responses), only invalid-judge rows count', () => {
    expect(refusesRecovery('{"stage_index":1,"invalid_judge_response":true}', true)).toBe(true);
    expect(refusesRecovery('{"stage_index":1,"invalid_judge_response":false}', true)).toBe(false);
    expect(refusesRecovery('{"stage_index":1}', true)).toBe(false);
  });

  it('the sources: the sidecar of --rollouts; with retryInvalidJudgeResponses also --rollouts itself', () => {
    expect(recoverySources('/r/run.jsonl')).toEqual([{ path: '/r/run_failures.jsonl', invalidJudgeRowsOnly: false }]);
    expect(recoverySources('/r/run.jsonl', { retryInvalidJudgeResponses: true })).toEqual([
      { path: '/r/run_failures.jsonl', invalidJudgeRowsOnly: false },
      { path: '/r/run.jsonl', invalidJudgeRowsOnly: true },
    ]);
  });

  it("names the first refusing row by file:line with 0.7.0's words; any sidecar row counts, judge failure or not", async () => {
    const dir = tmp.freshDir();
    const rollouts = join(dir, 'run.jsonl');
    const sidecar = join(dir, 'run_failures.jsonl');
    writeFileSync(rollouts, '{"stage_index":0,"invalid_judge_response":true}\n');
    writeFileSync(sidecar, '{"_ng_failure_class":"judge_failed"}\n\n{"_ng_failure_class":"timeout_exceeded","stage_index":2}\n');
    const err = await refuseMultiStageRecovery(rollouts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `${sidecar}:3: --judge-failed-only does not support multi-stage rows; resume the multi-stage rollout collection so stage ` +
        'identity and adaptive references are preserved',
    );
    writeFileSync(sidecar, '{"_ng_failure_class":"judge_failed"}\n');
    await expect(refuseMultiStageRecovery(rollouts)).resolves.toBeUndefined();
    await expect(refuseMultiStageRecovery(rollouts, { retryInvalidJudgeResponses: true })).rejects.toThrow(
      `${rollouts}:1: --judge-failed-only`,
    );
    await expect(refuseMultiStageRecovery(join(dir, 'missing.jsonl'))).resolves.toBeUndefined();
  });
});
