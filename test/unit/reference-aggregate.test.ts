import { describe, expect, it } from 'vitest';
import { AggregationError, aggregateMetrics } from '../../src/reference-server/aggregate.js';

type Row = Record<string, unknown>;

/** A verify response as reverify sends it to /aggregate_metrics (response stripped to usage). */
function row(task: number, rollout: number, reward: number, outputTokens?: number, extra: Row = {}): Row {
  return {
    _ng_task_index: task,
    _ng_rollout_index: rollout,
    reward,
    ...(outputTokens === undefined ? {} : { response: { usage: { output_tokens: outputTokens } } }),
    agent_ref: { name: 'mcqa_simple_agent' },
    ...extra,
  };
}

/** The §3.7 request, in a scrambled completion order. */
const WORKED_EXAMPLE = [row(1, 1, 1.0, 5), row(0, 1, 0.0, 6), row(1, 0, 1.0, 5), row(0, 0, 1.0, 4)];

describe('default aggregation: the spec §3.7 worked example', () => {
  const result = aggregateMetrics(WORKED_EXAMPLE);

  it('reproduces agent_metrics to the last digit, in mean/max/min/median/std order', () => {
    expect(Object.entries(result.agent_metrics)).toEqual([
      ['mean/reward', 0.75],
      ['mean/output_tokens', 5.0],
      ['max/reward', 1.0],
      ['max/output_tokens', 6],
      ['min/reward', 0.0],
      ['min/output_tokens', 4],
      ['median/reward', 1.0],
      ['median/output_tokens', 5.0],
      ['std/reward', 0.5],
      ['std/output_tokens', 0.816496580927726],
    ]);
  });

  it('key_metrics are the mean/* entries', () => {
    expect(Object.entries(result.key_metrics)).toEqual([
      ['mean/reward', 0.75],
      ['mean/output_tokens', 5.0],
    ]);
  });

  it('reproduces task 0 exactly, with the fixed fields after the stats', () => {
    const task0 = result.group_level_metrics[0];
    expect(Object.keys(task0)).toEqual([
      '_ng_task_index',
      'mean/reward',
      'mean/output_tokens',
      'max/reward',
      'max/output_tokens',
      'min/reward',
      'min/output_tokens',
      'median/reward',
      'median/output_tokens',
      'std/reward',
      'std/output_tokens',
      'sample',
      'num_rollouts',
      'expected_num_rollouts',
      'missing_num_rollouts',
      'reward_profile_completion_pct',
      'rollout_infos',
    ]);
    expect(task0).toEqual({
      _ng_task_index: 0,
      'mean/reward': 0.5,
      'mean/output_tokens': 5.0,
      'max/reward': 1.0,
      'max/output_tokens': 6,
      'min/reward': 0.0,
      'min/output_tokens': 4,
      'median/reward': 0.5,
      'median/output_tokens': 5.0,
      'std/reward': 0.7071067811865476,
      'std/output_tokens': 1.4142135623730951,
      sample: { agent_ref: { name: 'agent' } },
      num_rollouts: 2,
      expected_num_rollouts: 2,
      missing_num_rollouts: 0,
      reward_profile_completion_pct: 100.0,
      rollout_infos: [
        { rollout_id: '0:0', _ng_task_index: 0, _ng_rollout_index: 0, reward: 1.0, output_tokens: 4 },
        { rollout_id: '0:1', _ng_task_index: 0, _ng_rollout_index: 1, reward: 0.0, output_tokens: 6 },
      ],
    });
  });

  it('reproduces task 1 (mean/reward 1.0, std/reward 0.0)', () => {
    const task1 = result.group_level_metrics[1];
    expect(task1._ng_task_index).toBe(1);
    expect(task1['mean/reward']).toBe(1.0);
    expect(task1['std/reward']).toBe(0.0);
    expect(task1['std/output_tokens']).toBe(0.0);
    expect((task1.rollout_infos as Row[]).map((info) => info.rollout_id)).toEqual(['1:0', '1:1']);
  });

  it('fills std with 0 for a single-row task and omits the fields it lacks', () => {
    const withSingle = aggregateMetrics([...WORKED_EXAMPLE, row(2, 0, 1.0)]);
    const task2 = withSingle.group_level_metrics[2];
    expect(task2).toMatchObject({ _ng_task_index: 2, 'std/reward': 0.0, num_rollouts: 1 });
    expect(Object.keys(task2).filter((key) => key.includes('/'))).toEqual([
      'mean/reward',
      'max/reward',
      'min/reward',
      'median/reward',
      'std/reward',
    ]);
  });
});

describe('default aggregation rules', () => {
  it('returns empty values for an empty request', () => {
    expect(aggregateMetrics([])).toEqual({ group_level_metrics: [], agent_metrics: {}, key_metrics: {}, repeat_level_metrics: [] });
  });

  it('rejects duplicate (task, rollout) keys', () => {
    expect(() => aggregateMetrics([row(0, 0, 1), row(0, 1, 1), row(0, 0, 0)])).toThrow(AggregationError);
    expect(() => aggregateMetrics([row(3, 1, 1), row(3, 1, 1)])).toThrow('Duplicate materialized input row for rollout key (3, 1)');
  });

  it('reads rows lacking indices as (0, 0), so two of them collide', () => {
    const result = aggregateMetrics([{ reward: 0.5 }]);
    expect(result.group_level_metrics[0]).toMatchObject({
      _ng_task_index: 0,
      rollout_infos: [{ rollout_id: '0:0', _ng_task_index: 0, _ng_rollout_index: 0, reward: 0.5 }],
    });
    expect(() => aggregateMetrics([{ reward: 1 }, { _ng_task_index: 0, reward: 0 }])).toThrow(/\(0, 0\)/);
  });

  it('omits NaN stats: std of a 1-value column, and everything of an absent column', () => {
    const result = aggregateMetrics([row(0, 0, 1, undefined, { score: 2 }), row(0, 1, 0), row(1, 0, 1)]);
    const [task0, task1] = result.group_level_metrics;
    expect(task0['mean/score']).toBe(2);
    expect(task0).not.toHaveProperty('std/score'); // one value, and reward's std is defined: no fill
    expect(task0['std/reward']).toBeCloseTo(Math.SQRT1_2, 15);
    expect(Object.keys(task1).some((key) => key.endsWith('/score'))).toBe(false);
    expect(Object.values(result.agent_metrics).every((value) => Number.isFinite(value))).toBe(true);
  });

  it('does not fill std for a column missing from some rows of an all-undefined-std group', () => {
    const result = aggregateMetrics([
      { _ng_task_index: 0, _ng_rollout_index: 0, a: 1 },
      { _ng_task_index: 0, _ng_rollout_index: 1, b: 2 },
    ]);
    expect(Object.keys(result.group_level_metrics[0]).filter((key) => key.startsWith('std/'))).toEqual([]);
  });

  it('converts bools to 0/1 in stats and rollout_infos, keeping a raw reward as sent', () => {
    const result = aggregateMetrics([
      { _ng_task_index: 0, _ng_rollout_index: 0, reward: true, correct: true },
      { _ng_task_index: 0, _ng_rollout_index: 1, reward: false, correct: false },
    ]);
    expect(result.agent_metrics['mean/correct']).toBe(0.5);
    expect(result.agent_metrics['mean/reward']).toBe(0.5);
    const infos = result.group_level_metrics[0].rollout_infos as Row[];
    expect(infos[0]).toEqual({ rollout_id: '0:0', _ng_task_index: 0, _ng_rollout_index: 0, reward: true, correct: 1 });
    expect(infos[1].correct).toBe(0);
  });

  it('merges response.usage into the numeric fields (usage wins) and ignores non-numbers', () => {
    const usage = { input_tokens: 10, output_tokens: 4, total_tokens: 14, input_tokens_details: { cached_tokens: 3 } };
    const result = aggregateMetrics([
      { _ng_task_index: 0, reward: 1, total_tokens: 999, verdict: 'ok', meta: { x: 1 }, response: { usage } },
    ]);
    expect(result.key_metrics).toEqual({
      'mean/reward': 1,
      'mean/total_tokens': 14,
      'mean/input_tokens': 10,
      'mean/output_tokens': 4,
    });
    expect(Object.keys(result.agent_metrics).some((key) => /cached|verdict|meta/.test(key))).toBe(false);
  });

  it('aggregates keys starting with "_" but never the indices themselves', () => {
    const result = aggregateMetrics([row(0, 0, 1, undefined, { _ng_attempt_index: 2 })]);
    expect(result.agent_metrics['mean/_ng_attempt_index']).toBe(2);
    expect(Object.keys(result.agent_metrics).some((key) => key.includes('_ng_task_index'))).toBe(false);
    expect(Object.keys(result.agent_metrics).some((key) => key.includes('_ng_rollout_index'))).toBe(false);
  });

  it('orders fields by first appearance in key order, not arrival order', () => {
    const result = aggregateMetrics([
      { _ng_task_index: 1, _ng_rollout_index: 0, b: 1, reward: 1 },
      { _ng_task_index: 0, _ng_rollout_index: 0, reward: 0, a: 1 },
    ]);
    expect(Object.keys(result.key_metrics)).toEqual(['mean/reward', 'mean/a', 'mean/b']);
    expect(result.group_level_metrics.map((group) => group._ng_task_index)).toEqual([0, 1]);
  });

  it('lists rollout_infos by rollout index with usage and numeric top-level fields only', () => {
    const result = aggregateMetrics([
      { _ng_task_index: 0, _ng_rollout_index: 1, reward: 0, extracted_answer: 'B', judge_score: 0.25 },
      { _ng_task_index: 0, _ng_rollout_index: 0, reward: 1, response: { usage: { output_tokens: 7 } }, ok: true },
    ]);
    expect(result.group_level_metrics[0].rollout_infos).toEqual([
      { rollout_id: '0:0', _ng_task_index: 0, _ng_rollout_index: 0, reward: 1, output_tokens: 7, ok: 1 },
      { rollout_id: '0:1', _ng_task_index: 0, _ng_rollout_index: 1, reward: 0, judge_score: 0.25 },
    ]);
  });

  it('sums like numpy (pairwise), matching pandas to the last digit on 300 rows', () => {
    const rows = Array.from({ length: 300 }, (_, r) => ({
      _ng_task_index: 0,
      _ng_rollout_index: r,
      reward: ((r * 7919) % 1000) / 7,
    }));
    const metrics = aggregateMetrics(rows).agent_metrics;
    // Values printed by pandas for the same rows; naive summation gives 71.49999999999999.
    expect(metrics['mean/reward']).toBe(71.5);
    expect(metrics['std/reward']).toBe(41.53311931459037);
    expect(metrics['median/reward']).toBe(71.78571428571428);
  });

  it('fails on a null response, as the real server does (HTTP 500)', () => {
    expect(() => aggregateMetrics([{ _ng_task_index: 0, reward: 1, response: null }])).toThrow(AggregationError);
  });
});

describe('repeat_level_metrics (as NeMo Gym 0.7.0 shapes them)', () => {
  const reward = (task: number, rollout: number, value: number, extra: Row = {}): Row => ({
    _ng_task_index: task,
    _ng_rollout_index: rollout,
    reward: value,
    ...extra,
  });

  it('one entry per rollout index, in index order: counts of tasks, then per field (by name) mean, median, std, sem, min, max, p25, p75', () => {
    // Repeat 0 has all four tasks (rewards 1..4); repeat 1 only tasks 0 and 1 (rewards 2, 4), and a score on one row.
    const rows = [reward(1, 1, 4), reward(3, 0, 4), reward(0, 0, 1), reward(2, 0, 3), reward(0, 1, 2, { score: 7 }), reward(1, 0, 2)];
    const repeats = aggregateMetrics(rows).repeat_level_metrics;
    expect(repeats.map((r) => Object.keys(r))).toEqual([
      [
        '_ng_rollout_index',
        'sample_count',
        'missing_count',
        ...['mean', 'median', 'std', 'sem', 'min', 'max', 'p25', 'p75'].map((s) => `${s}/reward`),
      ],
      [
        '_ng_rollout_index',
        'sample_count',
        'missing_count',
        ...['reward', 'score'].flatMap((f) => ['mean', 'median', 'std', 'sem', 'min', 'max', 'p25', 'p75'].map((s) => `${s}/${f}`)),
      ],
    ]);
    // The numbers pandas gives for the same columns (sample std; numpy's linear quantiles).
    expect(repeats[0]).toEqual({
      _ng_rollout_index: 0,
      sample_count: 4,
      missing_count: 0,
      'mean/reward': 2.5,
      'median/reward': 2.5,
      'std/reward': 1.2909944487358056,
      'sem/reward': 0.6454972243679028,
      'min/reward': 1,
      'max/reward': 4,
      'p25/reward': 1.75,
      'p75/reward': 3.25,
    });
    expect(repeats[1]).toEqual({
      _ng_rollout_index: 1,
      sample_count: 2,
      missing_count: 2,
      'mean/reward': 3,
      'median/reward': 3,
      'std/reward': 1.4142135623730951,
      'sem/reward': 1,
      'min/reward': 2,
      'max/reward': 4,
      'p25/reward': 2.5,
      'p75/reward': 3.5,
      // One value: std 0, every other stat that value.
      'mean/score': 7,
      'median/score': 7,
      'std/score': 0,
      'sem/score': 0,
      'min/score': 7,
      'max/score': 7,
      'p25/score': 7,
      'p75/score': 7,
    });
  });

  it('none when the rows have a single rollout index', () => {
    expect(aggregateMetrics([reward(0, 0, 1), reward(1, 0, 0)]).repeat_level_metrics).toEqual([]);
    expect(aggregateMetrics(WORKED_EXAMPLE).repeat_level_metrics).toHaveLength(2);
  });
});
