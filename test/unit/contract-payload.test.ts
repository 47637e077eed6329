import { describe, expect, it } from 'vitest';
import { buildPayload, readRollout, readRolloutResponse, verifyRequest } from '../../src/contract/payload.js';

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

  it('verifyRequest: a row without task_input and a rollout without carried fields give exactly buildPayload', () => {
    const input = '{ "seed" : 12345678901234567890, "agent_ref":{"name":"a"},"_ng_task_index":0,"_ng_rollout_index":0}';
    const rollout = '{"response":{"score":2.50},"reward":1.0,"extracted_answer":"A"}';
    expect(verifyRequest(input, rollout).payload).toBe(buildPayload(input, readRolloutResponse(rollout)!));
  });
});

describe('NeMo Gym 0.7.0: deliverables_dir and reference_ids are carried from the rollout', () => {
  it('appended after response in that order, raw (big integers kept), null included', () => {
    const input = '{"x":1,"_ng_task_index":0,"_ng_rollout_index":0}';
    const rollout = '{"reference_ids":[12345678901234567890,2],"response":{"id":"r"},"deliverables_dir":null,"reward":1.0}';
    expect(verifyRequest(input, rollout).payload).toBe(
      '{"x":1,"_ng_task_index":0,"_ng_rollout_index":0,"response":{"id":"r"},"deliverables_dir":null,"reference_ids":[12345678901234567890,2]}',
    );
  });

  it("a key the input row already has keeps its place and takes the rollout's value", () => {
    const input = '{"reference_ids":[9],"response":{"old":1},"y":2,"_ng_task_index":0,"_ng_rollout_index":0}';
    const rollout = '{"reference_ids":[3],"response":{"new":1},"deliverables_dir":"/runs/7"}';
    expect(verifyRequest(input, rollout).payload).toBe(
      '{"reference_ids":[3],"response":{"new":1},"y":2,"_ng_task_index":0,"_ng_rollout_index":0,"deliverables_dir":"/runs/7"}',
    );
  });

  it('readRollout: response, the carried fields present (last duplicate wins), the task and old reward for the live estimate', () => {
    expect(readRollout('{"response":{},"deliverables_dir":"a","deliverables_dir":"b","_ng_task_index":7}')).toEqual({
      response: '{}',
      carried: [['deliverables_dir', '"b"']],
      old: { task: '7', reward: null },
    });
    expect(readRollout('{"reward":1}')).toEqual({ response: null, carried: [], old: { task: '', reward: 1 } });
  });
});
