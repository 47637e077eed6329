import { describe, expect, it } from 'vitest';
import type { RoutingTable } from '../../src/config/routing.js';
import { InputError } from '../../src/contract/errors.js';
import { routeInputRow } from '../../src/planning/input-route.js';

const routing: RoutingTable = {
  agents: { agent_a: 'rs_a' },
  catchAll: null,
  servers: { rs_a: 'http://a', rs_b: 'http://b' },
  taskSources: ['rs_a', 'rs_b'],
  environmentServers: { env_b: 'rs_b' },
};

const route = (text: string) => routeInputRow(JSON.parse(text) as Record<string, unknown>, text, routing, 'in.jsonl:4');

function problem(text: string): string {
  try {
    route(text);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('the plan routes each inputs row as NeMo Gym 0.7.0 routes its /verify body', () => {
  it('by task_source, then the environment-server stamp, then the agent; counted under the agent, else the stamp', () => {
    expect(route('{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}')).toEqual({
      agent: 'agent_a',
      server: 'rs_a',
    });
    expect(route('{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"},"_ng_environment_server":"env_b"}')).toEqual({
      agent: 'agent_a',
      server: 'rs_b',
    });
    expect(route('{"_ng_task_index":0,"_ng_rollout_index":0,"task_source":"rs_a","_ng_environment_server":"env_b"}')).toEqual({
      agent: 'env_b',
      server: 'rs_a',
    });
  });

  it('a materialized task row is routed by its body: the task fields are lifted first', () => {
    const row =
      '{"task_id":{"taskset":"t","task_id":"0"},"task_input":{"task_source":"rs_a","q":1},"_ng_task_index":0,"_ng_rollout_index":0,"_ng_environment_server":"env_b"}';
    expect(route(row)).toEqual({ agent: 'env_b', server: 'rs_a' });
  });

  it('bad task rows and unroutable rows stop the plan with file:line', () => {
    expect(problem('{"task_input":{"task_data":3},"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}')).toBe(
      'in.jsonl:4: reverify: task_input.task_data must be an object; fix this row of --inputs',
    );
    expect(problem('{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_environment_server":"env_x"}')).toBe(
      "in.jsonl:4: reverify: cannot find a resources server for row (agent_ref.name=None, task_source=None). Known agents: ['agent_a'].",
    );
    expect(problem('{"_ng_task_index":0,"_ng_rollout_index":0}')).toMatch(/^in\.jsonl:4: materialized input row has no "agent_ref"/);
  });
});
