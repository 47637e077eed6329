/** Rows moved out of a rollouts file (src/contract/invalid-judge-move.ts) and the reference server's invalid verdicts. */
import { describe, expect, it } from 'vitest';
import { isFlaggedInvalidJudge, isMovedRow, moveIdentity, movedRow, RowFields } from '../../src/contract/invalid-judge-move.js';
import { InvalidJudges, parseInvalidJudgeRules } from '../../src/reference-server/invalid-judge.js';

const row = (text: string) => new RowFields(text);

describe('which rows move and their identity', () => {
  it('a truthy invalid_judge_response moves; false, 0, null and absence do not', () => {
    expect(isFlaggedInvalidJudge(row('{"invalid_judge_response":true}'))).toBe(true);
    expect(isFlaggedInvalidJudge(row('{"invalid_judge_response":1}'))).toBe(true);
    for (const v of ['false', '0', 'null', '""']) expect(isFlaggedInvalidJudge(row(`{"invalid_judge_response":${v}}`))).toBe(false);
    expect(isFlaggedInvalidJudge(row('{"reward":0.0}'))).toBe(false);
    expect(isMovedRow(row('{"_ng_migrated_invalid_judge_response":true}'))).toBe(true);
    expect(isMovedRow(row('{"invalid_judge_response":true}'))).toBe(false);
  });

  it('identity = (stage, task, rollout, attempt): stage and attempt 0 when absent or falsy, 3 equals 3.0, big indices exact', () => {
    const id = (t: string) => moveIdentity(row(t));
    expect(id('{"_ng_task_index":3,"_ng_rollout_index":1}')).toBe(
      id('{"stage_index":0,"_ng_task_index":3.0,"_ng_rollout_index":1,"_ng_attempt_index":null}'),
    );
    expect(id('{"_ng_task_index":3,"_ng_rollout_index":1}')).not.toBe(
      id('{"_ng_task_index":3,"_ng_rollout_index":1,"_ng_attempt_index":1}'),
    );
    expect(id('{"_ng_task_index":3,"_ng_rollout_index":1}')).not.toBe(id('{"_ng_task_index":3,"_ng_rollout_index":1,"stage_index":2}'));
    expect(id('{"_ng_task_index":12345678901234567890,"_ng_rollout_index":0}')).not.toBe(
      id('{"_ng_task_index":12345678901234567891,"_ng_rollout_index":0}'),
    );
  });
});

describe('movedRow', () => {
  it('adds judge_invalid and the marker, drops the terminal stamp and reuse_cached_deliverable, keeps every other byte', () => {
    const text =
      '{"reward":0.0,"big":12345678901234567890,"invalid_judge_response":true,"_ng_failure_terminal":true,"reuse_cached_deliverable":true,"_ng_task_index":1,"_ng_rollout_index":0}';
    expect(movedRow(row(text), false)).toBe(
      '{"reward":0.0,"big":12345678901234567890,"invalid_judge_response":true,"_ng_task_index":1,"_ng_rollout_index":0,"_ng_failure_class":"judge_invalid","_ng_migrated_invalid_judge_response":true}',
    );
  });

  it('a truthy class is kept; a null one is replaced in place; a cached deliverable sets reuse_cached_deliverable', () => {
    expect(movedRow(row('{"_ng_failure_class":"permanent","invalid_judge_response":true}'), false)).toBe(
      '{"_ng_failure_class":"permanent","invalid_judge_response":true,"_ng_migrated_invalid_judge_response":true}',
    );
    expect(movedRow(row('{"_ng_failure_class":null,"invalid_judge_response":true}'), true)).toBe(
      '{"_ng_failure_class":"judge_invalid","invalid_judge_response":true,"reuse_cached_deliverable":true,"_ng_migrated_invalid_judge_response":true}',
    );
  });
});

describe('reference server: chosen invalid verdicts', () => {
  it('flags every grading of a row, or its first N; permanent ones say invalid_judge_retryable false', () => {
    const judges = new InvalidJudges([...parseInvalidJudgeRules('3:0, 4:1@2', true), ...parseInvalidJudgeRules(['5:0'], false)]);
    expect([1, 2, 3].map(() => judges.next('3:0'))).toEqual(Array(3).fill({ reward: 0, invalid_judge_response: true }));
    expect([1, 2, 3].map(() => judges.next('4:1') !== null)).toEqual([true, true, false]);
    expect(judges.next('5:0')).toEqual({ reward: 0, invalid_judge_response: true, invalid_judge_retryable: false });
    expect(judges.next('6:0')).toBeNull();
  });

  it('an entry of another shape is refused, naming it', () => {
    expect(() => parseInvalidJudgeRules('3', true)).toThrow("invalid-judge row '3': expected TASK:ROLLOUT or TASK:ROLLOUT@N");
  });
});
