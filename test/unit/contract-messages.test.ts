import { describe, expect, it } from 'vitest';
import {
  appendAndOverwrite,
  appendNeedsJudgeFailedOnly,
  catchAllWarning,
  computingAggregateMetrics,
  deletedExistingOutput,
  disableAggregationNotice,
  greaterOrEqualOne,
  guardError,
  guardWarning,
  keyMetricsFor,
  malformedShard,
  maxAttemptsWarning,
  multipleResourcesServers,
  noMatchingInput,
  noResourcesServer,
  noServerUrl,
  noShardsMatched,
  nothingToReverify,
  outputExists,
  recoveryWarning,
  resultPaths,
  resumeSummary,
  seededSuccesses,
  skippingResume,
  unknownAgent,
  verifyingWith,
} from '../../src/contract/messages.js';

// Literals below are copied from the spec (reference/nemo-gym-contract.md) and newer NeMo Gym code.
describe('exact message texts', () => {
  it('§4.3 guard error and warning (Python list, sorted)', () => {
    expect(guardError(['rs_b', 'rs_a'])).toBe(
      "Resource server(s) ['rs_a', 'rs_b'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. Pass ++force=true to override (output will be prefixed with 'unsafe_').",
    );
    expect(guardWarning(['rs_a'])).toBe(
      "WARNING: resource server(s) ['rs_a'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. Output is prefixed with 'unsafe_'.",
    );
  });

  it('§4.4 output exists / deleted', () => {
    expect(outputExists('results/out.jsonl')).toBe(
      "Output file already exists: 'results/out.jsonl'. Pass --overwrite to delete it and start fresh, or --resume to continue from it.",
    );
    expect(deletedExistingOutput('results/out_failures.jsonl')).toBe("Deleted existing output file: 'results/out_failures.jsonl'");
  });

  it('§4.2 routing errors', () => {
    expect(noResourcesServer()).toBe('reverify: no resources server found in the config.');
    expect(multipleResourcesServers(['rs_one', 'rs_two'])).toBe(
      "reverify: multiple resources servers ['rs_one', 'rs_two'] and no agent blocks to route by. Use a config with agent blocks.",
    );
    expect(unknownAgent('ghost', undefined, ['b_agent', 'a_agent'])).toBe(
      "reverify: cannot find a resources server for row (agent_ref.name='ghost', task_source=None). Known agents: ['a_agent', 'b_agent'].",
    );
    expect(unknownAgent(undefined, 'src', [])).toBe(
      "reverify: cannot find a resources server for row (agent_ref.name=None, task_source='src'). Known agents: [].",
    );
    expect(catchAllWarning('verifier_block')).toBe(
      "reverify: config has no agent blocks; routing EVERY rollout agent name to the only resources server 'verifier_block'. Mismatched or stale agent names cannot be detected in this mode.",
    );
  });

  it('§4.7 no matching input: the spec sentence, plus where, the key and a hint', () => {
    expect(noMatchingInput('runs/rollouts.jsonl', 7, { task: 3, rollout: 1 }, 'runs/inputs.jsonl')).toBe(
      'runs/rollouts.jsonl:7: No matching materialized input row found for rollout row (3, 1) in runs/inputs.jsonl; check that --inputs is the materialized inputs file of the run that produced --rollouts',
    );
    expect(noMatchingInput('r.jsonl', 1, { task: 'a', rollout: 0 })).toContain(
      "r.jsonl:1: No matching materialized input row found for rollout row ('a', 0); check",
    );
    // A key already formatted exactly (formatLineKey), e.g. with a 20-digit index.
    expect(noMatchingInput('r.jsonl', 2, '(12345678901234567891, 0)')).toContain('for rollout row (12345678901234567891, 0); check');
  });

  it('§4.6 recovery texts', () => {
    expect(recoveryWarning()).toBe(
      "WARNING: judge-failed-only recovery merges rewards from TWO sources — the successful rollouts in --rollouts were scored by the ORIGINAL run's verifier/judge, while the recovered rows are scored by the CURRENT verification config. If any crucial parameter (judge model, judge prompt/params, verifier config, etc.) changed between the original run and this recovery, the merged rewards are inconsistent. Ensure the verification config matches the original run.",
    );
    expect(seededSuccesses(3, 'results/out.jsonl')).toBe('Recovery mode: seeded 3 successful rollout(s) into results/out.jsonl');
  });

  it('§4.8 resume texts; §6.63 summary of 10 total, 1 done, 7 remaining', () => {
    expect(skippingResume()).toBe("Skipping resume_from_cache because cache paths don't exist!");
    expect(nothingToReverify()).toBe('WARNING: Nothing to be re-verified.');
    const summary = resumeSummary({ total: 10, done: 1, terminal: 1, maxed: 1, remaining: 7 });
    expect(summary).toBe(
      [
        'Resumed from cache. Found:',
        '- 10 total rows to be re-verified',
        '- 1 rows already done (in main jsonl)',
        '- 1 sidecar-terminal (for example skipped) → not retried',
        '- 1 hit max_attempts → not retried',
        '- 7 rows that still need to be run',
      ].join('\n'),
    );
    expect(summary).toContain('10 total rows to be re-verified');
    expect(summary).toContain('1 rows already done');
    expect(summary).toContain('7 rows that still need to be run');
  });

  it('§4.0 validation texts', () => {
    expect(appendNeedsJudgeFailedOnly()).toBe('`append` is only valid together with `judge_failed_only` (pass --judge-failed-only).');
    expect(appendAndOverwrite()).toBe('`append` and `overwrite` are mutually exclusive: one appends, the other clears.');
    expect(greaterOrEqualOne('--concurrency', 0)).toBe('--concurrency: Input should be greater than or equal to 1 (got 0)');
    expect(greaterOrEqualOne('--limit')).toContain('greater than or equal to 1');
  });

  it('§4.9 / §4.13 / §4.14 progress texts', () => {
    expect(verifyingWith(4)).toBe('Verifying with 4 concurrent requests');
    expect(disableAggregationNotice()).toBe(
      'Skipping aggregate-metrics computation because disable_aggregation=True. Run `reverify aggregate` after all shards finish to compute the global metrics.',
    );
    expect(computingAggregateMetrics()).toBe('Computing aggregate metrics');
    expect(keyMetricsFor('agent_a')).toBe('Key metrics for agent_a:');
    expect(resultPaths('o.jsonl', null)).toBe('Re-verified rollouts: o.jsonl\nAggregate metrics: None');
  });

  it('§1.0 attempt-cap warning and §4.15 shard errors', () => {
    expect(maxAttemptsWarning('0', 'must be >= 1, got 0')).toBe(
      "WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS='0' (must be >= 1, got 0); falling back to default 3.",
    );
    expect(noShardsMatched('shards/*.jsonl')).toBe("No shards matched input_glob='shards/*.jsonl'");
    expect(malformedShard('s/0.jsonl', 4, 'unexpected end')).toBe("Malformed JSON in 's/0.jsonl' at line 4: unexpected end");
  });

  it('ours: a resources server without a URL says how to give one', () => {
    expect(noServerUrl(['rs_a'])).toBe(
      "reverify: no URL for resources server(s) ['rs_a']: add host and port to its implementation in the config, or pass --server rs_a=http://HOST:PORT",
    );
    expect(noServerUrl(['x', 'y'])).toMatch(/--server x=http:\/\/HOST:PORT for each$/);
  });
});
