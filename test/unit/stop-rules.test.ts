/** `--stop-when` (issue 32 item 3): the grammar, its evaluation, and the runs where a rule on the estimate is refused. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import type { RunSpec } from '../../src/contract/run-spec.js';
import { detailsOf } from '../../workflows/details.js';
import { initialState } from '../../workflows/run-state.js';
import { firstFiring, parseStopRule, ruleHolds, stopRuleText, stoppedEarlyText, type StopFacts } from '../../src/contract/stop-rules.js';

const base = { inputs: 'in.jsonl', rollouts: 'ro.jsonl', output: 'out.jsonl' };

function problem(raw: Record<string, unknown>): string {
  try {
    parseRunOptions(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const facts = (f: Partial<StopFacts>): StopFacts => ({ delta: null, rows: 0, requests: 0, ...f });

describe('--stop-when rules', () => {
  it('parses each form, spaces allowed, and writes it back canonically', () => {
    expect(parseStopRule('delta-excludes-zero')).toEqual({ kind: 'delta-excludes-zero' });
    expect(parseStopRule('width<0.01')).toEqual({ kind: 'width-below', width: 0.01 });
    expect(parseStopRule(' width < .05 ')).toEqual({ kind: 'width-below', width: 0.05 });
    expect(parseStopRule('rows>=100')).toEqual({ kind: 'rows-at-least', rows: 100 });
    expect(parseStopRule('requests >= 5000')).toEqual({ kind: 'requests-at-least', requests: 5000 });
    for (const t of ['delta-excludes-zero', 'width<0.01', 'rows>=100', 'requests>=5000']) expect(stopRuleText(parseStopRule(t))).toBe(t);
  });

  it.each(['', 'delta', 'width<0', 'width<1.5', 'width<=0.1', 'rows>=0', 'rows>100', 'rows>=1.5', 'tasks>=3'])(
    'refuses %j with the grammar in one line',
    (text) => {
      expect(() => parseStopRule(text)).toThrow(/is not a rule: use `delta-excludes-zero`, `width<X`/);
    },
  );

  it('delta-excludes-zero holds only when the interval lies wholly on one side of 0; never without an estimate', () => {
    const r = parseStopRule('delta-excludes-zero');
    expect(ruleHolds(r, facts({ delta: { lo: 0.001, hi: 0.2 } }))).toBe(true);
    expect(ruleHolds(r, facts({ delta: { lo: -0.3, hi: -0.01 } }))).toBe(true);
    expect(ruleHolds(r, facts({ delta: { lo: 0, hi: 0.2 } }))).toBe(false);
    expect(ruleHolds(r, facts({ delta: { lo: -0.1, hi: 0.1 } }))).toBe(false);
    expect(ruleHolds(r, facts({ delta: null, rows: 10 ** 6 }))).toBe(false);
  });

  it('width<X compares the width strictly; the budgets compare counts with >=', () => {
    expect(ruleHolds(parseStopRule('width<0.1'), facts({ delta: { lo: -0.04, hi: 0.05 } }))).toBe(true);
    expect(ruleHolds(parseStopRule('width<0.1'), facts({ delta: { lo: 0, hi: 0.1 } }))).toBe(false);
    expect(ruleHolds(parseStopRule('rows>=40'), facts({ rows: 40 }))).toBe(true);
    expect(ruleHolds(parseStopRule('rows>=40'), facts({ rows: 39 }))).toBe(false);
    expect(ruleHolds(parseStopRule('requests>=7'), facts({ requests: 8 }))).toBe(true);
  });

  it('the first rule in the order given that holds fires', () => {
    const rules = ['rows>=50', 'delta-excludes-zero', 'requests>=10'].map(parseStopRule);
    expect(firstFiring(rules, facts({ rows: 5, requests: 3 }))).toBeNull();
    expect(firstFiring(rules, facts({ rows: 60, requests: 60, delta: { lo: 0.1, hi: 0.2 } }))).toEqual(rules[0]);
    expect(firstFiring(rules, facts({ rows: 20, requests: 60, delta: { lo: 0.1, hi: 0.2 } }))).toEqual(rules[1]);
    expect(firstFiring(rules, facts({ rows: 20, requests: 60 }))).toEqual(rules[2]);
    expect(stoppedEarlyText({ rule: 'delta-excludes-zero', rows: 120, planned: 400 })).toBe(
      'stopped early: delta-excludes-zero at 120 of 400 rows',
    );
  });

  it('run options: repeatable, parsed once into the rules; a bad value is one line naming the grammar', () => {
    const o = parseRunOptions({ ...base, order: 'random', stopWhen: ['delta-excludes-zero', 'rows>=10'] });
    expect(o.stopWhen).toEqual([{ kind: 'delta-excludes-zero' }, { kind: 'rows-at-least', rows: 10 }]);
    expect(parseRunOptions(base).stopWhen).toEqual([]);
    expect(problem({ ...base, stopWhen: ['width<2'] })).toBe(
      "--stop-when 'width<2' is not a rule: use `delta-excludes-zero`, `width<X` (0 < X <= 1), `rows>=N` or `requests>=N` (N a whole number >= 1)",
    );
  });

  it('refuses a rule on the estimate where there is none (recovery) or where it would not hold (file order), and any rule with ATIF', () => {
    const atif = { inputs: 'in.jsonl', output: 'out.jsonl', inputFormat: 'atif', atifManifest: 'm.jsonl' };
    for (const rule of ['width<0.1', 'requests>=100'])
      expect(problem({ ...atif, stopWhen: [rule] })).toBe(
        '--stop-when is not available with --input-format atif: an ATIF run cannot be resumed, so the rollouts it never started could not be verified later; use --limit N instead',
      );
    expect(problem({ ...base, judgeFailedOnly: true, order: 'random', stopWhen: ['delta-excludes-zero'] })).toMatch(
      /^--stop-when delta-excludes-zero needs the live estimate, which recovery \(--judge-failed-only\) does not have/,
    );
    expect(problem({ ...base, stopWhen: ['rows>=5', 'delta-excludes-zero'] })).toMatch(
      /^--stop-when delta-excludes-zero needs --order random: .*; add --order random$/,
    );
    expect(parseRunOptions({ ...atif }).stopWhen).toEqual([]);
    expect(parseRunOptions({ ...base, stopWhen: ['rows>=5'] }).stopWhen).toHaveLength(1);
  });

  it("the Temporal UI's details say where the run stopped", () => {
    const st = initialState({ concurrency: 2 } as RunSpec);
    st.phase = 'verify';
    expect(detailsOf(st)).not.toContain('stopped early');
    st.stoppedEarly = { rule: 'width<0.05', rows: 300, planned: 1000 };
    expect(detailsOf(st)).toContain('**Phase:** verify · **stopped early: width<0.05 at 300 of 1000 rows**');
  });
});
