import { describe, expect, it } from 'vitest';
import { guardOffenders, isReverifyMode } from '../../src/contract/reverify-mode.js';
import { describeInputRowProblem, describeRolloutRowProblem, InputRowSchema, RolloutRowSchema } from '../../src/contract/row-shapes.js';

const goodInput = { _ng_task_index: 0, _ng_rollout_index: 1, agent_ref: { type: 'responses_api_agents', name: 'a' }, extra: [1] };
const goodRollout = { _ng_task_index: 0, _ng_rollout_index: 1, response: { id: 'r', output: [] }, reward: 1 };

describe('materialized input rows', () => {
  it('accepts a valid row (extra fields pass through)', () => {
    expect(describeInputRowProblem(goodInput)).toBeNull();
    expect(describeInputRowProblem({ ...goodInput, _ng_task_index: 3.0 })).toBeNull();
  });

  it.each([
    [[1, 2], 'materialized input row is not a JSON object (got an array)'],
    [null, 'materialized input row is not a JSON object (got null)'],
    [
      { _ng_rollout_index: 0, agent_ref: { name: 'a' } },
      'materialized input row has no "_ng_task_index" (each row of --inputs needs _ng_task_index, _ng_rollout_index and agent_ref.name)',
    ],
    [{ ...goodInput, _ng_task_index: '3' }, '"_ng_task_index" must be an integer, got "3" (a string)'],
    [{ ...goodInput, _ng_rollout_index: 1.5 }, '"_ng_rollout_index" must be an integer, got 1.5 (a number)'],
    [{ ...goodInput, _ng_rollout_index: null }, '"_ng_rollout_index" must be an integer, got null'],
    [{ ...goodInput, _ng_task_index: true }, '"_ng_task_index" must be an integer, got true (a boolean)'],
    [{ ...goodInput, agent_ref: undefined }, 'materialized input row has no "agent_ref" (each row of --inputs needs'],
    [{ ...goodInput, agent_ref: 'a' }, '"agent_ref" must be an object like {"name": "<agent name>"}, got "a" (a string)'],
    [{ ...goodInput, agent_ref: { type: 'x' } }, 'materialized input row has no "agent_ref.name"'],
    [{ ...goodInput, agent_ref: { name: 5 } }, '"agent_ref.name" must be a string (the agent name), got 5 (a number)'],
    [{ ...goodInput, _ng_task_index: 2 ** 60 }, '"_ng_task_index" is 1152921504606847000, beyond the exact integer range'],
  ])('%j -> %s', (row, reason) => {
    const problem = describeInputRowProblem(row);
    expect(problem).not.toBeNull();
    expect(problem!.startsWith(reason)).toBe(true);
    expect(problem).not.toContain('\n');
  });
});

describe('materialized input rows stamped with an environment server (NeMo Gym 0.7.0)', () => {
  const envRow = { _ng_task_index: 0, _ng_rollout_index: 1, _ng_environment_server: 'env', task_input: {} };

  it('may name no agent: the stamp names the run', () => {
    expect(describeInputRowProblem(envRow)).toBeNull();
    expect(describeInputRowProblem({ ...envRow, agent_ref: { type: 'responses_api_agents' } })).toBeNull();
    expect(describeInputRowProblem({ ...envRow, agent_ref: { name: 'a' } })).toBeNull();
  });

  it('an agent_ref it has must still be well formed, and a stamp that is not a string names nothing', () => {
    expect(describeInputRowProblem({ ...envRow, agent_ref: 'a' })).toMatch(/^"agent_ref" must be an object/);
    expect(describeInputRowProblem({ ...envRow, agent_ref: { name: 5 } })).toMatch(/^"agent_ref.name" must be a string/);
    expect(describeInputRowProblem({ ...envRow, _ng_environment_server: 3 })).toMatch(/^materialized input row has no "agent_ref"/);
  });
});

describe('indices beyond 2^53', () => {
  it('are shown with the exact digits of the line when it is given (JSON.parse has rounded the parsed row)', () => {
    const line = '{"_ng_task_index":12345678901234567891,"_ng_rollout_index":0,"response":{}}';
    const row = JSON.parse(line) as Record<string, unknown>;
    expect(describeRolloutRowProblem(row)).toContain('is 12345678901234567000, beyond');
    expect(describeRolloutRowProblem(row, line)).toContain('"_ng_task_index" is 12345678901234567891, beyond the exact integer range');
    const input = '{"_ng_task_index":0,"_ng_rollout_index":-99999999999999999999,"agent_ref":{"name":"a"}}';
    expect(describeInputRowProblem(JSON.parse(input), input)).toContain('"_ng_rollout_index" is -99999999999999999999, beyond');
  });
});

describe('rollout rows', () => {
  it('accepts a valid row', () => {
    expect(describeRolloutRowProblem(goodRollout)).toBeNull();
  });

  it.each([
    [
      { _ng_task_index: 0, response: {} },
      'rollout row has no "_ng_rollout_index" (each row to re-verify needs _ng_task_index, _ng_rollout_index and response)',
    ],
    [{ _ng_task_index: 0, _ng_rollout_index: 0 }, 'rollout row has no "response"'],
    [{ ...goodRollout, response: null }, '"response" must be a JSON object (the Responses API response), got null'],
    [{ ...goodRollout, response: 'text' }, '"response" must be a JSON object (the Responses API response), got "text" (a string)'],
    ['{"a":1}', 'rollout row is not a JSON object (got a string)'],
  ])('%j -> %s', (row, reason) => {
    expect(describeRolloutRowProblem(row)!.startsWith(reason)).toBe(true);
  });
});

describe('§6.96–97 reverify-mode offenders', () => {
  it('§6.96 all stateless: no offenders', () => {
    expect(guardOffenders({ rs_a: 'stateless', rs_b: 'stateless' })).toEqual([]);
  });

  it('§6.97 rs_a stateless, rs_b and rs_c unsupported: ["rs_b", "rs_c"] sorted', () => {
    expect(guardOffenders({ rs_c: 'unsupported', rs_a: 'stateless', rs_b: 'unsupported' })).toEqual(['rs_b', 'rs_c']);
  });

  it('§6.99 unknown is an offender too', () => {
    expect(guardOffenders({ verifier_block: 'unknown' })).toEqual(['verifier_block']);
  });

  it('only the three strings are modes (§2.1)', () => {
    expect(['stateless', 'unsupported', 'unknown'].every(isReverifyMode)).toBe(true);
    expect(isReverifyMode('STATELESS')).toBe(false);
    expect(isReverifyMode(null)).toBe(false);
  });
});

describe('fast path agrees with the zod schemas', () => {
  const variants: unknown[] = [
    goodInput,
    goodRollout,
    { ...goodInput, ...goodRollout },
    {},
    [],
    null,
    'x',
    { ...goodInput, _ng_task_index: -0 },
    { ...goodInput, _ng_task_index: -3 },
    { ...goodInput, _ng_task_index: 2 ** 53 },
    { ...goodInput, _ng_task_index: 2 ** 53 - 1 },
    { ...goodInput, agent_ref: [] },
    { ...goodInput, agent_ref: { name: '' } },
    { ...goodRollout, response: [] },
    { ...goodRollout, response: {} },
  ];
  it.each(variants.map((v) => [JSON.stringify(v), v]))('%s', (_, row) => {
    expect(describeInputRowProblem(row) === null).toBe(InputRowSchema.safeParse(row).success);
    expect(describeRolloutRowProblem(row) === null).toBe(RolloutRowSchema.safeParse(row).success);
  });
});
