import { describe, expect, it } from 'vitest';
import {
  classifyResult,
  classifyResultRaw,
  isJudgeFailure,
  stampResult,
  stampsFromPayload,
  verifyFailedRow,
  verifyRejectedRow,
  type Outcome,
} from '../../src/contract/outcome.js';

function both(body: string): Outcome {
  const parsed = classifyResult(JSON.parse(body));
  expect(classifyResultRaw(body)).toBe(parsed);
  return parsed;
}

describe('§7 routing outcomes of odd result bodies', () => {
  it('no_persist together with a failure class is dropped (no-persist wins)', () => {
    expect(both('{"reward":0.0,"_ng_no_persist":true,"_ng_failure_class":"kill_shaped"}')).toBe('drop');
  });

  it('_ng_failure_class null is a success', () => {
    expect(both('{"reward":1.0,"_ng_failure_class":null}')).toBe('success');
  });

  it('any non-null class is a failure, even an unknown one or ""', () => {
    expect(both('{"_ng_failure_class":"judge_failed"}')).toBe('failure');
    expect(both('{"_ng_failure_class":"brand_new_class"}')).toBe('failure');
    expect(both('{"_ng_failure_class":""}')).toBe('failure');
    expect(both('{"_ng_failure_class":0}')).toBe('failure');
    expect(both('{"_ng_failure_class":false}')).toBe('failure');
  });

  it('_ng_failure_terminal without a class is a success', () => {
    expect(both('{"reward":1.0,"_ng_failure_terminal":true}')).toBe('success');
  });

  it('no_persist uses Python truthiness', () => {
    for (const falsy of ['false', '0', '0.0', '""', '[]', '{}', 'null', '{ }']) {
      expect(both(`{"_ng_no_persist":${falsy},"reward":1}`)).toBe('success');
    }
    for (const truthy of ['true', '1', '"no"', '[0]', '{"a":0}', '-1', '0.5']) {
      expect(both(`{"_ng_no_persist":${truthy},"_ng_failure_class":"x"}`)).toBe('drop');
    }
  });

  it('a body without reward is still a success', () => {
    expect(both('{"judgement":"ok"}')).toBe('success');
  });
});

describe('§6.39–42 judge-failure classification', () => {
  it('§6.39 _ng_failure_class "judge_failed" is a judge failure', () => {
    expect(isJudgeFailure({ _ng_failure_class: 'judge_failed' })).toBe(true);
  });
  it('§6.40 "timeout_exceeded" is not', () => {
    expect(isJudgeFailure({ _ng_failure_class: 'timeout_exceeded' })).toBe(false);
  });
  it('§6.41 no class is not', () => {
    expect(isJudgeFailure({ reward: 0 })).toBe(false);
  });
  it('§6.42 only the legacy boolean _ng_failure_judge_failed is not', () => {
    expect(isJudgeFailure({ _ng_failure_judge_failed: true })).toBe(false);
  });
});

describe('stamps', () => {
  const payload =
    '{"responses_create_params":{"input":[]},"skills_ref":{"path":"s","hash":"h","skills":[]},"agent_ref":{"type":"responses_api_agents","name":"mcqa_simple_agent"},"_ng_task_index":12345678901234567890,"_ng_rollout_index":1.0,"response":{"id":"r"}}';

  it('stampsFromPayload takes raw texts from the payload', () => {
    expect(stampsFromPayload(payload)).toEqual({
      task: '12345678901234567890',
      rollout: '1.0',
      agentRef: '{"type":"responses_api_agents","name":"mcqa_simple_agent"}',
      skillsRef: '{"path":"s","hash":"h","skills":[]}',
    });
  });

  it('stampsFromPayload carries task_source when present, and throws without indices', () => {
    expect(stampsFromPayload('{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"task_source":"rs_x"}').taskSource).toBe(
      '"rs_x"',
    );
    expect(() => stampsFromPayload('{"agent_ref":{"name":"a"}}')).toThrow('_ng_task_index, _ng_rollout_index');
  });

  it('stampResult overwrites RS-provided stamps in place and appends the rest (§7)', () => {
    const body = '{"_ng_rollout_index":99,"responses_create_params":{"input":[]},"reward":1.0,"agent_ref":{"name":"wrong"}}';
    const out = stampResult(body, stampsFromPayload(payload));
    expect(out).toBe(
      '{"_ng_rollout_index":1.0,"responses_create_params":{"input":[]},"reward":1.0,"agent_ref":{"type":"responses_api_agents","name":"mcqa_simple_agent"},"_ng_task_index":12345678901234567890,"skills_ref":{"path":"s","hash":"h","skills":[]}}',
    );
  });

  it('§6.105 a success row is exactly {reward, T, R, agent_ref, skills_ref}; without skills_ref none is added', () => {
    const stamped = stampResult('{"reward":1.0}', stampsFromPayload(payload));
    expect(Object.keys(JSON.parse(stamped))).toEqual(['reward', '_ng_task_index', '_ng_rollout_index', 'agent_ref', 'skills_ref']);
    const plain = stampsFromPayload('{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}');
    const failure = stampResult('{"reward":0.0,"_ng_failure_class":"timeout"}', plain);
    expect(failure).toBe('{"reward":0.0,"_ng_failure_class":"timeout","_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}');
  });

  it('NeMo Gym 0.7.0: _ng_environment_server is stamped after agent_ref, then task_source, then skills_ref; agent_ref only when present', () => {
    const withEnv = stampsFromPayload(
      '{"skills_ref":{"h":1},"task_source":"rs","_ng_environment_server":"env","agent_ref":{"name":"a"},"_ng_task_index":0,"_ng_rollout_index":2}',
    );
    expect(stampResult('{"reward":1.0}', withEnv)).toBe(
      '{"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":2,"agent_ref":{"name":"a"},"_ng_environment_server":"env","task_source":"rs","skills_ref":{"h":1}}',
    );
    const taskRow = stampsFromPayload('{"_ng_task_index":0,"_ng_rollout_index":2,"_ng_environment_server":"env","q":1}');
    expect(taskRow).toEqual({ task: '0', rollout: '2', environmentServer: '"env"' });
    expect(stampResult('{"reward":1.0,"_ng_environment_server":"x"}', taskRow)).toBe(
      '{"reward":1.0,"_ng_environment_server":"env","_ng_task_index":0,"_ng_rollout_index":2}',
    );
    expect(verifyFailedRow(taskRow, null, 'reset')).toBe(
      '{"reward":0.0,"_ng_failure_class":"transient","verify_status":null,"verify_error":"reset","_ng_task_index":0,"_ng_rollout_index":2,"_ng_environment_server":"env"}',
    );
  });

  it('big integers in the verifier body survive stamping byte-exactly', () => {
    const body = '{"reward":1.0,"response":{"created_at":12345678901234567890}}';
    const out = stampResult(body, stampsFromPayload(payload));
    expect(out.startsWith('{"reward":1.0,"response":{"created_at":12345678901234567890},')).toBe(true);
  });
});

describe('verifyFailedRow', () => {
  it('writes the sidecar row for a row the server keeps failing on: transient, not terminal, reward 0.0', () => {
    const stamps = { task: '3', rollout: '1', agentRef: '{"name":"a"}' };
    expect(verifyFailedRow(stamps, 500, '"ValueError: x"')).toBe(
      '{"reward":0.0,"_ng_failure_class":"transient","verify_status":500,"verify_error":"\\"ValueError: x\\"","_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"name":"a"}}',
    );
    expect(classifyResult(JSON.parse(verifyFailedRow(stamps, 502, 'y')))).toBe('failure');
  });
});

describe('verifyRejectedRow', () => {
  const stamps = { task: '3', rollout: '0', agentRef: '{"name":"a"}' };

  it('writes the sidecar row for a 4xx reply, reward as 0.0', () => {
    expect(verifyRejectedRow(stamps, 422, '{"detail":"bad"}')).toBe(
      '{"reward":0.0,"_ng_failure_class":"verify_rejected","_ng_failure_terminal":true,"verify_status":422,"verify_error":"{\\"detail\\":\\"bad\\"}","_ng_task_index":3,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}',
    );
    const row = JSON.parse(verifyRejectedRow({ ...stamps, skillsRef: '{"path":"p"}', taskSource: '"rs"' }, 404, 'nope'));
    expect(row.task_source).toBe('rs');
    expect(row.skills_ref).toEqual({ path: 'p' });
    expect(classifyResult(row)).toBe('failure');
  });

  it('cuts the excerpt to 500 characters without splitting a surrogate pair', () => {
    const long = JSON.parse(verifyRejectedRow(stamps, 400, 'x'.repeat(2000))).verify_error as string;
    expect(long).toHaveLength(500);
    const emoji = JSON.parse(verifyRejectedRow(stamps, 400, '😀'.repeat(600))).verify_error as string;
    expect(Array.from(emoji)).toHaveLength(500);
    expect(emoji).toBe('😀'.repeat(500));
  });

  it('replaces lone surrogates so Python readers accept the line', () => {
    const err = JSON.parse(verifyRejectedRow(stamps, 400, 'a\ud800b')).verify_error;
    expect(err).toBe('a\ufffdb');
  });
});
