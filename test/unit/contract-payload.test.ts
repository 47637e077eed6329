import { describe, expect, it } from 'vitest';
import { buildPayload, readRolloutResponse } from '../../src/contract/payload.js';

describe('§6.35–38 payload building', () => {
  it('§6.35 payload = input ∪ {response}', () => {
    const input = '{"task":"t","verifier_metadata":{"answer":"B"},"_ng_task_index":0,"_ng_rollout_index":0}';
    const rollout = '{"response":{"id":"r1","output":[]},"reward":1.0}';
    const payload = buildPayload(input, readRolloutResponse(rollout)!);
    expect(payload).toBe(
      '{"task":"t","verifier_metadata":{"answer":"B"},"_ng_task_index":0,"_ng_rollout_index":0,"response":{"id":"r1","output":[]}}',
    );
  });

  it("§6.36 the rollout's response wins over one in the input, keeping its position", () => {
    const input = '{"a":1,"response":{"old":true},"b":2}';
    const payload = buildPayload(input, '{"new":true}');
    expect(payload).toBe('{"a":1,"response":{"new":true},"b":2}');
  });

  it('§6.37 the input row text is not modified', () => {
    const input = '{"a":1}';
    const copy = input.slice();
    buildPayload(input, '{}');
    expect(input).toBe(copy);
  });

  it('§6.38 extra rollout fields (reward, rollout index) are not in the payload', () => {
    const input = '{"x":1,"_ng_task_index":4,"_ng_rollout_index":0}';
    const rollout = '{"response":{"id":"r"},"reward":0.5,"_ng_rollout_index":9,"extracted_answer":"A"}';
    const payload = JSON.parse(buildPayload(input, readRolloutResponse(rollout)!));
    expect(payload).toEqual({ x: 1, _ng_task_index: 4, _ng_rollout_index: 0, response: { id: 'r' } });
  });

  it('keeps integers above 2^53 and float spellings byte-exactly', () => {
    const input = '{"seed":12345678901234567890,"temperature":1.0,"_ng_task_index":0,"_ng_rollout_index":0}';
    const rollout = '{"response":{"created_at":98765432109876543210,"score":2.50},"reward":1.0}';
    expect(buildPayload(input, readRolloutResponse(rollout)!)).toBe(
      '{"seed":12345678901234567890,"temperature":1.0,"_ng_task_index":0,"_ng_rollout_index":0,"response":{"created_at":98765432109876543210,"score":2.50}}',
    );
  });

  it('readRolloutResponse: raw text of response, null when absent, last duplicate wins', () => {
    expect(readRolloutResponse('{"reward":1}')).toBeNull();
    expect(readRolloutResponse('{"response":null}')).toBe('null');
    expect(readRolloutResponse('{"response":{"a":1},"response":{"b":2}}')).toBe('{"b":2}');
    expect(readRolloutResponse('{"response" : { "a" : "}" } }\n')).toBe('{ "a" : "}" }');
  });
});
