import { describe, expect, it } from 'vitest';
import { aggregateRequestBody, stripForAggregation, stripForShardAggregation } from '../../src/contract/aggregate-request.js';

describe('stripForAggregation (§2.3)', () => {
  it('§6.93 drops responses_create_params, keeps response.usage only, keeps other fields', () => {
    const row =
      '{"responses_create_params":{"input":[]},"response":{"id":"r","output":[{"x":1}],"usage":{"input_tokens":12,"output_tokens":4}},"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":1,"agent_ref":{"name":"a"}}';
    expect(stripForAggregation(row)).toBe(
      '{"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":1,"agent_ref":{"name":"a"},"response":{"usage":{"input_tokens":12,"output_tokens":4}}}',
    );
  });

  it('no usage, empty usage, null usage or null response: no response key at all', () => {
    expect(stripForAggregation('{"response":{"id":"r"},"reward":1}')).toBe('{"reward":1}');
    expect(stripForAggregation('{"response":{"usage":{}},"reward":1}')).toBe('{"reward":1}');
    expect(stripForAggregation('{"response":{"usage":null},"reward":1}')).toBe('{"reward":1}');
    expect(stripForAggregation('{"response":null,"reward":1}')).toBe('{"reward":1}');
    expect(stripForAggregation('{"reward":1}')).toBe('{"reward":1}');
  });

  it('reverify keeps heavy collector fields (spec §8.8)', () => {
    const row = '{"ng_trajectory":{"steps":[1]},"ng_model_call_capture":{"calls":[]},"ng_agent_observations":[1],"reward":1}';
    expect(stripForAggregation(row)).toBe(row);
  });

  it('keeps a 20-digit integer byte-exactly', () => {
    const row = '{"response":{"usage":{"total_tokens":12345678901234567890}},"big":12345678901234567890,"f":1.0}';
    expect(stripForAggregation(row)).toBe(
      '{"big":12345678901234567890,"f":1.0,"response":{"usage":{"total_tokens":12345678901234567890}}}',
    );
  });

  it('keeps the raw usage text as written', () => {
    const row = '{"response": {"usage" : { "output_tokens" : 4.0 } }, "reward": 1}';
    expect(stripForAggregation(row)).toBe('{"reward": 1,"response":{"usage":{ "output_tokens" : 4.0 }}}');
  });
});

describe('stripForShardAggregation (§4.15)', () => {
  it('also drops ng_agent_observations, ng_model_call_capture, ng_trajectory', () => {
    const row =
      '{"ng_trajectory":{},"response":{"usage":{"output_tokens":4}},"ng_model_call_capture":{"calls":[]},"reward":1.0,"ng_agent_observations":[],"responses_create_params":{}}';
    expect(stripForShardAggregation(row)).toBe('{"reward":1.0,"response":{"usage":{"output_tokens":4}}}');
  });
});

describe('aggregateRequestBody', () => {
  it('wraps the rows as {"verify_responses": [...]}', () => {
    expect(aggregateRequestBody(['{"a":1}\n', '{"b":2}'])).toBe('{"verify_responses":[{"a":1},{"b":2}]}');
    expect(JSON.parse(aggregateRequestBody([]))).toEqual({ verify_responses: [] });
  });
});
