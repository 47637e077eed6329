import { describe, expect, it } from 'vitest';
import { agentLabelOf, labelRuns, rowRouteOf, runKeyOf } from '../../src/contract/row-route.js';

describe('row routes (NeMo Gym 0.7.0 rollout_run_key, rollout_agent_label, label_runs)', () => {
  it('rowRouteOf reads agent_ref.name, task_source and _ng_environment_server when they are strings', () => {
    expect(rowRouteOf({ agent_ref: { name: 'a' }, task_source: 'rs', _ng_environment_server: 'env' })).toEqual({
      agent: 'a',
      taskSource: 'rs',
      environmentServer: 'env',
    });
    expect(rowRouteOf({ agent_ref: 'a', task_source: 1, _ng_environment_server: null })).toEqual({});
  });

  it('the run key is the environment server, else the agent; the agent label the agent, else the environment server', () => {
    expect(runKeyOf({ agent: 'a', environmentServer: 'env' })).toBe('env');
    expect(runKeyOf({ agent: 'a' })).toBe('a');
    expect(runKeyOf({ taskSource: 'rs' })).toBeUndefined();
    expect(agentLabelOf({ agent: 'a', environmentServer: 'env' })).toBe('a');
    expect(agentLabelOf({ environmentServer: 'env' })).toBe('env');
  });

  it('labelRuns: the agent name when it names one run only, else the key', () => {
    const labels = labelRuns(
      new Map([
        ['agent_a', 'agent_a'],
        ['env_x', 'agent_x'],
        ['env_y1', 'agent_y'],
        ['env_y2', 'agent_y'],
        ['env_none', undefined],
      ]),
    );
    expect(Object.fromEntries(labels)).toEqual({
      agent_a: 'agent_a',
      env_x: 'agent_x',
      env_y1: 'env_y1',
      env_y2: 'env_y2',
      env_none: 'env_none',
    });
  });

  it("labelRuns: a label that still repeats (a server named like another run's agent) falls back to the key", () => {
    // Run `x` ran agent `y`; run `y` has no agent and is labelled `y` by its key: `x` becomes `x`.
    expect(
      Object.fromEntries(
        labelRuns(
          new Map([
            ['x', 'y'],
            ['y', undefined],
          ]),
        ),
      ),
    ).toEqual({ x: 'x', y: 'y' });
    expect(
      Object.fromEntries(
        labelRuns(
          new Map([
            ['y', undefined],
            ['x', 'y'],
          ]),
        ),
      ),
    ).toEqual({ y: 'y', x: 'x' });
  });
});
