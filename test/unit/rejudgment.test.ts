/** Re-judgments settled as the newer NeMo Gym run store settles them (src/contract/rejudgment.ts). */
import { describe, expect, it } from 'vitest';
import { emptyCounts, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';
import { routeReply } from '../../activities/verify-batch/route-reply.js';
import type { Stamps } from '../../src/contract/outcome.js';
import {
  checkSavedRejudgment,
  isGraded,
  operationId,
  operationPrefix,
  settledRow,
  settledSavedRow,
} from '../../src/contract/rejudgment.js';

const saved =
  '{"_ng_task_index":3,"_ng_rollout_index":1,"_ng_run_id":"run-7","_ng_attempt_index":2,"response":{"output":"B"},' +
  '"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_message":"judge timed out"}';
/** The stamps of key (3, 1): the verdicts below already carry them, so stamping changes no byte. */
const key: Stamps = { task: '3', rollout: '1' };
const judged = '{"_ng_task_index":3,"_ng_rollout_index":1,"responses_create_params":{},"response":{"output":"B"}}';

describe('settledRow', () => {
  it('takes the verdict, keeps the saved answer and identity, drops the failure keys, carries the operation id', () => {
    // The verifier echoed an altered response and a leftover failure message and admission key.
    const verdict =
      '{"_ng_task_index":3,"_ng_rollout_index":1,"response":{"output":"changed"},"reward":1.0,"mask_sample":false,' +
      '"_ng_failure_message":"stale","_ng_rejudge_pending":true}';
    const row = JSON.parse(settledRow(verdict, key, judged, saved, 'R/r2/3.1')) as Record<string, unknown>;
    expect(row).toEqual({
      _ng_task_index: 3,
      _ng_rollout_index: 1,
      response: { output: 'B' },
      reward: 1.0,
      mask_sample: false,
      _ng_run_id: 'run-7',
      _ng_attempt_index: 2,
      _ng_operation_id: 'R/r2/3.1',
    });
    expect(Object.keys(row).some((k) => k.startsWith('_ng_failure') || k.startsWith('_ng_rejudge'))).toBe(false);
  });

  it('leaves the verdict byte for byte but for the operation id when it echoes the saved answer', () => {
    const verdict = '{"_ng_task_index":3, "_ng_rollout_index":1, "response":{"output":"B"}, "reward":1.0}';
    const plain = '{"response":{"output":"B"}}';
    expect(settledRow(verdict, key, judged, plain, 'op')).toBe(
      '{"_ng_task_index":3, "_ng_rollout_index":1, "response":{"output":"B"}, "reward":1.0,"_ng_operation_id":"op"}',
    );
  });

  it('a failure row is settled as itself regraded: fields the verifier does not echo are kept, in place', () => {
    const failure =
      '{"_ng_task_index":3,"_ng_rollout_index":1,"ng_model_call_capture":{"calls":2},"response":{"output":"B"},"reward":0.0,' +
      '"failure_kind":"judge","_ng_failure_class":"judge_failed","note":"mine"}';
    const verdict = '{"response":{"output":"echoed"},"reward":1.0,"extracted_answer":"B"}';
    expect(settledRow(verdict, key, judged, failure, 'R/r1/3.1')).toBe(
      '{"_ng_task_index":3,"_ng_rollout_index":1,"ng_model_call_capture":{"calls":2},"response":{"output":"B"},"reward":1.0,' +
        '"note":"mine","extracted_answer":"B","_ng_operation_id":"R/r1/3.1"}',
    );
  });

  it('operation ids are the run, the round (1-based) and the key', () => {
    expect(operationId(operationPrefix('abc', 1), '12', '0')).toBe('abc/r2/12.0');
  });

  it('a grade is a reward that is not null', () => {
    expect(isGraded({ reward: 0 })).toBe(true);
    expect(isGraded({ reward: null })).toBe(false);
    expect(isGraded({ verdict: 'A' })).toBe(false);
  });
});

describe('routeReply of a re-judgment', () => {
  const stamps: Stamps = { task: '3', rollout: '1' };
  const row = { agent: 'a', planIndex: 4, latencyMs: 5, throttled: 0, rejudgment: { opId: 'R/r2/3.1', judged, saved } };
  const ok = (body: string) => ({ kind: 'ok' as const, status: 200, body, result: JSON.parse(body) as Record<string, unknown> });
  const counted = (r: ReturnType<typeof routeReply>): Checkpoint => {
    const cp: Checkpoint = { done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} };
    r.count(cp.counts, cp);
    return cp;
  };

  it('a graded success is the settled row', () => {
    const r = routeReply(ok('{"reward":1.0,"response":{"output":"B"}}'), stamps, row);
    expect(r.target).toBe('main');
    expect(JSON.parse(String(r.line))).toMatchObject({ reward: 1.0, _ng_operation_id: 'R/r2/3.1', _ng_run_id: 'run-7' });
  });

  it('a success without a grade is withdrawn: nothing written, listed for the next round as leaving no sidecar row', () => {
    const r = routeReply(ok('{"reward":null,"response":{"output":"B"}}'), stamps, row);
    expect([r.target, r.line]).toEqual([null, null]);
    expect(r.audit).toEqual({ cls: 'withdrawn', status: null });
    const cp = counted(r);
    expect(cp.judgeFailedRows).toEqual([4]);
    expect([cp.withdrawnRows, cp.terminalRows]).toEqual([[4], undefined]);
    expect(cp.counts).toMatchObject({ main: 0, failed: 0, withdrawn: 1, perAgent: { a: { withdrawn: 1 } } });
  });

  it('a judge failure again is saved in the sidecar as before (its failed outcome)', () => {
    const r = routeReply(ok('{"reward":0.0,"_ng_failure_class":"judge_failed"}'), stamps, row);
    expect(r.target).toBe('sidecar');
    expect(r.line).not.toContain('_ng_operation_id');
  });

  it('a plain verification (no operation) of an ungraded success still writes it, as NeMo Gym 0.7.0 does', () => {
    const r = routeReply(ok('{"verdict":"A"}'), stamps, { agent: 'a', planIndex: 0, latencyMs: 1, throttled: 0 });
    expect(r.target).toBe('main');
  });
});

describe('settledSavedRow (--rejudge-saved)', () => {
  it('is the saved row with its grading keys replaced: non-echoed fields kept in place, stale grading removed, operation id added', () => {
    const saved =
      '{"_ng_task_index":3,"_ng_rollout_index":0,"note":"kept","reward":0.0,"invalid_judge_response":true,"response":{"a":1},"_ng_operation_id":"old"}';
    const verdict = '{"response":{"a":1},"reward":1.0,"extracted_answer":"B"}';
    expect(settledSavedRow(verdict, saved, 'R/saved/3.0')).toBe(
      '{"_ng_task_index":3,"_ng_rollout_index":0,"note":"kept","reward":1.0,"response":{"a":1},"_ng_operation_id":"R/saved/3.0","extracted_answer":"B"}',
    );
  });

  it('check_rejudgment: null when settled already, one line when the saved row cannot settle', () => {
    const settled = '{"_ng_task_index":3,"_ng_rollout_index":0,"reward":1,"response":{},"_ng_operation_id":"R/saved/3.0"}';
    expect(checkSavedRejudgment(settled, '{"reward":1}', 'R/saved/3.0', 'out.jsonl:1')).toBeNull();
    expect(() =>
      checkSavedRejudgment('{"_ng_task_index":3,"_ng_rollout_index":0,"reward":1}', '{"reward":1}', 'R/saved/3.0', 'out.jsonl:4'),
    ).toThrow('out.jsonl:4: cannot settle a re-verification of this saved row: it has no saved answer (`response`) to judge again');
  });
});
