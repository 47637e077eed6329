/** NeMo Gym 0.7.0's opt-in retry rules as pure decisions (src/contract/retry-rules.ts). */
import { describe, expect, it } from 'vitest';
import { isJudgeFailure } from '../../src/contract/outcome.js';
import {
  invalidJudgeVerdict,
  isRecoveredClass,
  isRetriedNextRound,
  isTerminalFailure,
  markInvalidJudge,
} from '../../src/contract/retry-rules.js';

const on = { retryInvalidJudgeResponses: true, retryTerminalTimeouts: true };
const off = {};

describe('invalidJudgeVerdict (0.7.0 _normalize_invalid_judge_result)', () => {
  it('a truthy invalid_judge_response without a class is a retryable judge_invalid failure', () => {
    expect(invalidJudgeVerdict({ reward: 0, invalid_judge_response: true })).toEqual({ failureClass: 'judge_invalid', terminal: false });
    expect(invalidJudgeVerdict({ invalid_judge_response: 1, _ng_failure_class: null })).toEqual({
      failureClass: 'judge_invalid',
      terminal: false,
    });
  });

  it('invalid_judge_retryable exactly false makes it a terminal `permanent` failure; other falsy values do not', () => {
    expect(invalidJudgeVerdict({ invalid_judge_response: true, invalid_judge_retryable: false })).toEqual({
      failureClass: 'permanent',
      terminal: true,
    });
    for (const v of [0, null, '', true]) {
      expect(invalidJudgeVerdict({ invalid_judge_response: true, invalid_judge_retryable: v })?.failureClass).toBe('judge_invalid');
    }
  });

  it('no flag, a falsy flag, or a class already set: not one', () => {
    expect(invalidJudgeVerdict({ reward: 1 })).toBeNull();
    for (const v of [false, 0, '', [], {}, null]) expect(invalidJudgeVerdict({ invalid_judge_response: v })).toBeNull();
    expect(invalidJudgeVerdict({ invalid_judge_response: true, _ng_failure_class: 'judge_failed' })).toBeNull();
  });
});

describe('markInvalidJudge', () => {
  it('appends the class (and the terminal stamp) and keeps every other byte', () => {
    const raw = '{"reward":0.0,"big":12345678901234567890,"invalid_judge_response":true}';
    expect(markInvalidJudge(raw, { failureClass: 'judge_invalid', terminal: false })).toBe(
      '{"reward":0.0,"big":12345678901234567890,"invalid_judge_response":true,"_ng_failure_class":"judge_invalid"}',
    );
    expect(markInvalidJudge(raw, { failureClass: 'permanent', terminal: true })).toBe(
      '{"reward":0.0,"big":12345678901234567890,"invalid_judge_response":true,"_ng_failure_class":"permanent","_ng_failure_terminal":true}',
    );
  });

  it('a class key that is null, or a terminal key already there, keeps its place (Python dict assignment)', () => {
    expect(
      markInvalidJudge('{"_ng_failure_class":null,"_ng_failure_terminal":false,"x":1}', { failureClass: 'permanent', terminal: true }),
    ).toBe('{"_ng_failure_class":"permanent","_ng_failure_terminal":true,"x":1}');
  });
});

describe('isTerminalFailure (0.7.0 is_terminal_failure)', () => {
  it('without --retry-terminal-timeouts: the stamp alone decides', () => {
    expect(isTerminalFailure('timeout_exceeded', true, off)).toBe(true);
    expect(isTerminalFailure('skipped', false, off)).toBe(false);
    expect(isTerminalFailure('judge_failed', false, off)).toBe(false);
  });

  it('with it: timeout_exceeded and the repairable environment classes never are, skipped always is, others by the stamp', () => {
    for (const cls of ['timeout_exceeded', 'reference_missing', 'eval_missing', 'transport_ineligible']) {
      expect(isTerminalFailure(cls, true, on)).toBe(false);
    }
    expect(isTerminalFailure('skipped', false, on)).toBe(true);
    expect(isTerminalFailure('verify_rejected', true, on)).toBe(true);
    expect(isTerminalFailure('permanent', true, on)).toBe(true);
    expect(isTerminalFailure('judge_invalid', false, on)).toBe(false);
    expect(isTerminalFailure(undefined, true, on)).toBe(true);
  });
});

describe('which classes recovery recovers and the next round retries', () => {
  it('recovery: judge_failed; judge_invalid only with --retry-invalid-judge-responses', () => {
    expect(isRecoveredClass('judge_failed', off)).toBe(true);
    expect(isRecoveredClass('judge_invalid', off)).toBe(false);
    expect(isRecoveredClass('judge_invalid', on)).toBe(true);
    expect(isRecoveredClass('permanent', on)).toBe(false);
    expect(isJudgeFailure({ _ng_failure_class: 'judge_invalid' })).toBe(false);
    expect(isJudgeFailure({ _ng_failure_class: 'judge_invalid' }, on)).toBe(true);
  });

  it('next round: judge failures; with the flags also judge_invalid and the retried timeouts, never skipped or permanent', () => {
    expect(isRetriedNextRound('judge_failed', off)).toBe(true);
    for (const cls of ['judge_invalid', 'timeout_exceeded', 'eval_missing']) {
      expect(isRetriedNextRound(cls, off)).toBe(false);
      expect(isRetriedNextRound(cls, on)).toBe(true);
    }
    for (const cls of ['skipped', 'permanent', 'transient', 'verify_rejected']) expect(isRetriedNextRound(cls, on)).toBe(false);
  });
});
