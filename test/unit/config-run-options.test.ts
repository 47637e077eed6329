import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { parseRunOptions, RUN_FLAGS, RunOptionsSchema } from '../../src/config/run-options.js';
import { RUN_FLAG_LIST } from '../../src/config/run-flags.js';

const base = { inputs: 'in.jsonl', rollouts: 'ro.jsonl', output: 'out.jsonl' };

function problem(raw: unknown): string {
  try {
    parseRunOptions(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    return msg;
  }
  throw new Error('expected a ConfigError');
}

describe('run options: config validation (§6.1–9)', () => {
  it.each([
    ['limit', '--limit', 0],
    ['limit', '--limit', -1],
    ['concurrency', '--concurrency', 0],
    ['concurrency', '--concurrency', -1],
    ['concurrency', '--concurrency', '0'],
  ])('§6.1 %s = %j is rejected ("greater than or equal to 1")', (field, flag, value) => {
    const msg = problem({ ...base, [field]: value });
    expect(msg).toContain('greater than or equal to 1');
    expect(msg.startsWith(`${flag}: `)).toBe(true);
  });

  it('§6.2 omitted: no limit (our concurrency default is 32, not unbounded); 4 is kept', () => {
    const o = parseRunOptions(base);
    expect(o.limit).toBeUndefined();
    expect(o.concurrency).toBe(32);
    const four = parseRunOptions({ ...base, limit: 4, concurrency: '4' });
    expect(four.limit).toBe(4);
    expect(four.concurrency).toBe(4);
  });

  it('§6.3 resume defaults to false and can be set true', () => {
    expect(parseRunOptions(base).resume).toBe(false);
    expect(parseRunOptions({ ...base, resume: true }).resume).toBe(true);
  });

  it('§6.4 overwrite defaults to false and can be set true', () => {
    expect(parseRunOptions(base).overwrite).toBe(false);
    expect(parseRunOptions({ ...base, overwrite: true }).overwrite).toBe(true);
  });

  it('§6.5 judgeFailedOnly defaults to false and can be set true', () => {
    expect(parseRunOptions(base).judgeFailedOnly).toBe(false);
    expect(parseRunOptions({ ...base, judgeFailedOnly: true }).judgeFailedOnly).toBe(true);
  });

  it('§6.6 append defaults to false', () => {
    expect(parseRunOptions(base).append).toBe(false);
  });

  it('§6.7 append without judge_failed_only is rejected', () => {
    expect(problem({ ...base, append: true })).toBe('`append` is only valid together with `judge_failed_only` (pass --judge-failed-only).');
    // NeMo Gym checks this rule first, so it wins when both apply.
    expect(problem({ ...base, append: true, overwrite: true })).toContain('only valid together with `judge_failed_only`');
  });

  it('§6.8 append + judge_failed_only + overwrite is rejected ("mutually exclusive")', () => {
    expect(problem({ ...base, append: true, judgeFailedOnly: true, overwrite: true })).toBe(
      '`append` and `overwrite` are mutually exclusive: one appends, the other clears.',
    );
  });

  it('§6.9 append + judge_failed_only is accepted', () => {
    const o = parseRunOptions({ ...base, append: true, judgeFailedOnly: true });
    expect(o.append && o.judgeFailedOnly).toBe(true);
  });
});

describe('run options: defaults and other fields', () => {
  it('applies every default', () => {
    expect(parseRunOptions(base)).toEqual({
      ...base,
      inputFormat: 'gym',
      configs: [],
      servers: [],
      concurrency: 32,
      order: 'file',
      force: false,
      overwrite: false,
      resume: false,
      judgeFailedOnly: false,
      append: false,
      retryInvalidJudgeResponses: false,
      // Policies saved with the run (retryTerminalTimeouts, dispatchLongestFirst): absent keeps the saved one.
      disableAggregation: false,
      repairTruncated: false,
      allowUnsafe: false,
      dryRun: false,
      rejudge: true,
      upload: true,
      rejudgeDelayMs: 3_000,
      requestTimeoutMs: 600_000,
      batchSize: 1000,
      confidence: 0.95,
      failIf: [],
      stopWhen: [],
    });
  });

  it('--fail-if: each rule parsed before the run, and only where the run keeps a live estimate', () => {
    expect(parseRunOptions({ ...base, failIf: ['all.delta < -0.02', 'a.new.lower > 0.5'] }).failIf).toHaveLength(2);
    expect(problem({ ...base, failIf: ['all.delta < -0.02', 'all.dleta < 0'] })).toBe(
      `--fail-if 'all.dleta < 0': 'dleta' is not a statistic: use delta, new, old, flips(0->1) or flips(1->0); e.g. --fail-if 'all.delta(mean/reward) < -0.02' (docs/usage.md, "Gates for CI")`,
    );
    const atif = { inputs: 'in.jsonl', output: 'out.jsonl', inputFormat: 'atif', atifManifest: 'm.jsonl' };
    expect(problem({ ...atif, failIf: ['all.delta < 0'] })).toMatch(
      /^--fail-if is checked on the run's live estimate, which a run with --input-format atif does not keep/,
    );
    expect(problem({ ...base, judgeFailedOnly: true, failIf: ['all.delta < 0'] })).toMatch(
      /a run with --judge-failed-only does not keep: .*reverify report -o OUT --fail-if RULE/,
    );
  });

  it('--rejudge-saved needs --resume (not --judge-failed-only); --dry-run needs --rejudge-saved', () => {
    expect(problem({ ...base, rejudgeSaved: 'all' })).toMatch(
      /^--rejudge-saved re-verifies rows saved in an existing output: give it with --resume/,
    );
    expect(parseRunOptions({ ...base, resume: true, rejudgeSaved: '1:0' })).toMatchObject({ rejudgeSaved: '1:0', dryRun: false });
    expect(problem({ ...base, dryRun: true })).toBe('--dry-run checks a --rejudge-saved selection: give --rejudge-saved KEYS with it');
  });

  it('--allow-unsafe needs --resume', () => {
    expect(problem({ ...base, allowUnsafe: true })).toBe(
      '--allow-unsafe lets a --resume take other --inputs/--rollouts than the run was started with: give it with --resume',
    );
    expect(parseRunOptions({ ...base, resume: true, allowUnsafe: true })).toMatchObject({ allowUnsafe: true });
  });

  it('--order: random or file, a seed of 0 to 2^31 − 1, and not random with ATIF input', () => {
    expect(parseRunOptions({ ...base, order: 'random', orderSeed: '0' })).toMatchObject({ order: 'random', orderSeed: 0 });
    expect(problem({ ...base, order: 'shuffled' })).toMatch(/^--order: /);
    expect(problem({ ...base, order: 'random', orderSeed: 2 ** 31 })).toBe(`--seed is too large (got ${2 ** 31})`);
    const atif = { inputs: 'in.jsonl', output: 'out.jsonl', inputFormat: 'atif', atifManifest: 'm.jsonl' };
    expect(problem({ ...atif, order: 'random' })).toMatch(/^--order random is not available with --input-format atif/);
    expect(parseRunOptions({ ...atif, order: 'file' }).order).toBe('file');
  });

  it('--confidence is a level strictly between 0 and 1 (a number given as text is read)', () => {
    expect(parseRunOptions({ ...base, confidence: '0.99' }).confidence).toBe(0.99);
    for (const bad of [0, 1, 1.5, '95%']) expect(() => parseRunOptions({ ...base, confidence: bad })).toThrow(/confidence/);
  });

  it('accepts CLI-shaped values: integer strings, single strings for lists, "true"', () => {
    const o = parseRunOptions({
      ...base,
      configs: 'a.yaml',
      servers: ['rs=http://127.0.0.1:1'],
      batchSize: ' 50 ',
      maxAttempts: '2',
      requestTimeoutMs: 1000,
      force: 'true',
      extraCommanderField: 1,
    });
    expect(o).toMatchObject({ configs: ['a.yaml'], servers: ['rs=http://127.0.0.1:1'], batchSize: 50, maxAttempts: 2, force: true });
    expect('extraCommanderField' in o).toBe(false);
  });

  it.each([
    [{ inputs: undefined }, '--inputs is required'],
    [{ output: '  ' }, '--output is required'],
    [{ rollouts: 5 }, '--rollouts must be a path, got 5'],
    [{ concurrency: 'many' }, '--concurrency must be an integer, got "many"'],
    [{ limit: 1.5 }, '--limit must be an integer, got 1.5'],
    [{ batchSize: 0 }, '--batch-size: Input should be greater than or equal to 1 (got 0)'],
    [{ maxAttempts: 0 }, '--max-attempts: Input should be greater than or equal to 1 (got 0)'],
    [{ requestTimeoutMs: -5000 }, '--request-timeout takes a number of seconds greater than 0, got -5'],
    [{ force: 'yes' }, '--force is a switch (true or false), got "yes"'],
    [{ configs: [1] }, '--config takes text values, got [1]'],
    [{ servers: ['nourl'] }, '--server nourl: expected NAME=URL'],
  ])('%j -> %s', (patch, expected) => {
    expect(problem({ ...base, ...patch }).startsWith(expected)).toBe(true);
  });

  it('a non-object is reported as missing --inputs', () => {
    expect(problem(undefined)).toBe('--inputs is required');
  });
});

describe('run options: documentation', () => {
  it('every field has a flag name and one meaning, declared in run-flags.ts (the only place)', () => {
    for (const field of Object.keys(RunOptionsSchema.shape)) {
      expect(RUN_FLAGS[field], field).toMatch(/^--[a-z-]+$/);
      // A policy saved with the run has its `--no-` form beside it, and only that.
      const declared = RUN_FLAG_LIST.filter((f) => f.key === field && f.kind !== 'negated');
      const negations = RUN_FLAG_LIST.filter((f) => f.key === field && f.kind === 'negated');
      if (declared[0]?.kind === 'policy') expect(negations.map((f) => f.usage)).toEqual([RUN_FLAGS[field].replace(/^--/, '--no-')]);
      else if (declared.length === 0) expect(negations, field).toHaveLength(1);
      else expect(negations, field).toHaveLength(0);
      if (declared.length > 0) expect(declared, field).toHaveLength(1);
      else declared.push(...negations);
      expect(declared[0].meaning.length, field).toBeGreaterThan(10);
    }
  });
});
