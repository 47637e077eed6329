import { describe, expect, it } from 'vitest';
import { buildPayload, readRollout, verifyRequest } from '../../src/contract/payload.js';
import { pyJsonEqual } from '../../src/contract/py-json-equal.js';
import { taskInputProblem, taskRowOf } from '../../src/contract/task-input.js';

/** The `/verify` body of an inputs row and a rollout row (raw texts); `verifyRequest` also needs the indices. */
function body(input: string, rollout: string): string {
  const { response, carried } = readRollout(rollout);
  const payload = buildPayload(taskRowOf(input), response!, carried);
  if (input.includes('_ng_rollout_index')) expect(verifyRequest(input, rollout).payload).toBe(payload);
  return payload;
}

// Expected bodies below were computed by NeMo Gym 0.7.0's rules (row minus task_id/task_input,
// then task_data, then task_input's own fields, then response, then the carried rollout fields).
describe('NeMo Gym 0.7.0 materialized task rows: task_input fields are lifted into the /verify body', () => {
  it('a materialized task row (task_id + flat task_input): the task fields replace the envelope', () => {
    const input =
      '{"task_id":{"taskset":"mcqa","task_id":"7"},"task_input":{"responses_create_params":{"input":"q"},"expected_answer":"B"},' +
      '"_ng_task_index":7,"_ng_rollout_index":1,"_ng_environment_server":"mcqa_env"}';
    expect(body(input, '{"response":{"id":"r"},"reward":1.0}')).toBe(
      '{"_ng_task_index":7,"_ng_rollout_index":1,"_ng_environment_server":"mcqa_env","responses_create_params":{"input":"q"},' +
        '"expected_answer":"B","response":{"id":"r"}}',
    );
  });

  it("the historical task_input.task_data container: its fields come before task_input's own", () => {
    const input =
      '{"agent_ref":{"name":"a"},"task_input":{"responses_create_params":{"input":"q"},"task_data":{"expected_answer":"B","options":["A","B"]}},' +
      '"_ng_task_index":0,"_ng_rollout_index":0}';
    expect(body(input, '{"response":{"id":"r"}}')).toBe(
      '{"agent_ref":{"name":"a"},"_ng_task_index":0,"_ng_rollout_index":0,"expected_answer":"B","options":["A","B"],' +
        '"responses_create_params":{"input":"q"},"response":{"id":"r"}}',
    );
  });

  it('precedence: task_input fields over task_data over the row; a key of the row keeps its place', () => {
    const input = '{"a":1,"task_input":{"c":4,"task_data":{"b":3,"a":2,"d":5},"a":2.0},"b":0,"task_id":"x"}';
    expect(body(input, '{"response":{"id":"r"}}')).toBe('{"a":2.0,"b":3,"d":5,"c":4,"response":{"id":"r"}}');
  });

  it('values equal by Python == inside and outside task_data are no conflict (1 == 1.0 == true); the outside spelling is sent', () => {
    const input = '{"x":1,"task_input":{"task_id":"inner","task_data":{"task_input":1,"v":true},"v":1}}';
    expect(taskInputProblem(input)).toBeNull();
    expect(body(input, '{"response":null,"deliverables_dir":"/d","reference_ids":[1,2]}')).toBe(
      '{"x":1,"task_input":1,"v":1,"task_id":"inner","response":null,"deliverables_dir":"/d","reference_ids":[1,2]}',
    );
  });

  it("a conflicting field, or a task_data that is not an object, is refused with 0.7.0's words and what to do", () => {
    expect(taskInputProblem('{"task_input":{"task_data":{"k":1},"k":2}}')).toBe(
      "reverify: conflicting task field 'k' inside and outside task_data; keep one value in this row of --inputs",
    );
    // Integers beyond 2^53 that a double cannot tell apart still conflict.
    expect(taskInputProblem('{"task_input":{"task_data":{"k":12345678901234567890},"k":12345678901234567891}}')).toMatch(
      /conflicting task field 'k'/,
    );
    for (const data of ['[1]', 'null', '"x"', '3']) {
      expect(taskInputProblem(`{"task_input":{"task_data":${data}}}`)).toBe(
        'reverify: task_input.task_data must be an object; fix this row of --inputs',
      );
    }
    expect(() => taskRowOf('{"task_input":{"task_data":null}}')).toThrow('task_input.task_data must be an object');
  });

  it('a row whose task_input is not an object is not a task row: sent as it is', () => {
    const input = '{"task_input":"flat","q":1}';
    expect(taskRowOf(input)).toBe(input);
    expect(taskInputProblem(input)).toBeNull();
    expect(body(input, '{"response":{}}')).toBe('{"task_input":"flat","q":1,"response":{}}');
  });

  it('keeps integers above 2^53 and float spellings of the task fields byte-exactly', () => {
    const input = '{"task_input":{"task_data":{"seed":123456789012345678901,"t":1.0}},"_ng_task_index":0,"_ng_rollout_index":0}';
    expect(body(input, '{"response":{"created_at":98765432109876543210}}')).toBe(
      '{"_ng_task_index":0,"_ng_rollout_index":0,"seed":123456789012345678901,"t":1.0,"response":{"created_at":98765432109876543210}}',
    );
  });

  it("the stamps are the body's: a task row routed by its environment server names no agent", () => {
    const input =
      '{"task_id":{"taskset":"m","task_id":"0"},"task_input":{"q":1},"_ng_task_index":3,"_ng_rollout_index":0,"_ng_environment_server":"env"}';
    expect(verifyRequest(input, '{"response":{}}').stamps).toEqual({ task: '3', rollout: '0', environmentServer: '"env"' });
  });
});

describe('pyJsonEqual: Python == on raw JSON', () => {
  it.each([
    ['1', '1.0', true],
    ['true', '1', true],
    ['false', '0.0', true],
    ['1', '1.5', false],
    ['12345678901234567890', '12345678901234567891', false],
    ['12345678901234567890', '1.2345678901234567e19', false],
    ['9007199254740992', '9007199254740992.0', true],
    ['null', 'null', true],
    ['null', 'false', false],
    ['"a"', '"\\u0061"', true],
    ['"1"', '1', false],
    ['[1, 2]', '[1.0,2]', true],
    ['[1,2]', '[2,1]', false],
    ['{"a":1,"b":[true]}', '{ "b" : [1] , "a" : 1.0 }', true],
    ['{"a":1}', '{"a":1,"b":2}', false],
    ['{"a":1,"a":2}', '{"a":2}', true],
  ])('%s == %s is %s', (a, b, equal) => {
    expect(pyJsonEqual(a, b)).toBe(equal);
    expect(pyJsonEqual(b, a)).toBe(equal);
  });
});
