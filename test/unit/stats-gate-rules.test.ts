/** The `--fail-if` grammar (src/stats/gate-rules.ts) and the check of a rule on numbers (src/stats/gate-check.ts). */
import { describe, expect, it } from 'vitest';
import { checkGate, checkGates, type GateLookup } from '../../src/stats/gate-check.js';
import { liveGateLookup } from '../../src/stats/gate-live.js';
import { GateRuleError, parseGateRule, parseGateRules, ruleText, unknownScopes } from '../../src/stats/gate-rules.js';

const refusal = (text: string) => {
  try {
    parseGateRule(text);
  } catch (err) {
    expect(err).toBeInstanceOf(GateRuleError);
    return (err as Error).message;
  }
  throw new Error(`'${text}' was accepted`);
};

describe('--fail-if grammar', () => {
  it('reads scope, statistic, bound, comparison and number', () => {
    expect(parseGateRule('all.delta(mean/reward) < -0.02')).toEqual({
      text: 'all.delta(mean/reward) < -0.02',
      scope: 'all',
      statistic: 'delta',
      bound: 'estimate',
      op: '<',
      threshold: -0.02,
    });
    expect(parseGateRule(' agent_a.delta.upper<0 ')).toMatchObject({
      scope: 'agent_a',
      statistic: 'delta',
      bound: 'upper',
      op: '<',
      threshold: 0,
    });
    expect(parseGateRule('all.new( mean/reward ).lower >= .5')).toMatchObject({
      statistic: 'new',
      bound: 'lower',
      op: '>=',
      threshold: 0.5,
    });
    expect(parseGateRule('b.old <= 1e-1')).toMatchObject({ scope: 'b', statistic: 'old', op: '<=', threshold: 0.1 });
    expect(parseGateRule('all.delta > −0.5')).toMatchObject({ threshold: -0.5, op: '>' });
  });

  it('reads flips (their arrow is not the comparison) and agent names with dots', () => {
    expect(parseGateRule('all.flips(1->0) > 0.05')).toMatchObject({ statistic: 'flips-down', op: '>', threshold: 0.05 });
    expect(parseGateRule('all.flips(0→1).upper < 0.01')).toMatchObject({ statistic: 'flips-up', bound: 'upper', op: '<' });
    expect(parseGateRule('team.agent.v2.delta.lower > 0')).toMatchObject({ scope: 'team.agent.v2', statistic: 'delta', bound: 'lower' });
  });

  it('writes a rule in one canonical form', () => {
    expect(ruleText(parseGateRule('all.delta.upper<-0.020'))).toBe('all.delta(mean/reward).upper < -0.02');
    expect(ruleText(parseGateRule('a.flips(0→1) >= 0.1'))).toBe('a.flips(0->1) >= 0.1');
  });

  it('refuses a bad rule in one line saying what is wrong, with an example', () => {
    const example = "e.g. --fail-if 'all.delta(mean/reward) < -0.02'";
    expect(refusal('all.dleta < -0.02')).toBe(
      `--fail-if 'all.dleta < -0.02': 'dleta' is not a statistic: use delta, new, old, flips(0->1) or flips(1->0); ${example} (docs/usage.md, "Gates for CI")`,
    );
    expect(refusal('all.delta -0.02')).toContain('no comparison (<, <=, >, >=)');
    expect(refusal('all.delta == 0')).toContain("'==' is not a comparison of the gate");
    expect(refusal('all.delta < abc')).toContain("'abc' is not a number");
    expect(refusal('all.delta <')).toContain('no number after the comparison');
    expect(refusal('all.delta(pass_rate) < 0')).toContain('delta is of mean/reward only');
    expect(refusal('all.flips < 0')).toContain('flips takes (0->1) or (1->0), got nothing');
    expect(refusal('all.delta.mid < 0')).toContain('.mid is not a bound: use .lower or .upper');
    expect(refusal('delta < 0')).toContain("'delta' names no statistic");
    expect(refusal('my agent.delta < 0')).toContain("the scope 'my agent' is not an agent name");
    expect(refusal('   ')).toContain('the rule is empty');
    for (const m of [refusal('all.delta -0.02'), refusal('x')]) expect(m).toContain(example);
  });

  it('parses every rule of the repeated flag, and names scopes that are not agents', () => {
    const rules = parseGateRules(['all.delta < 0', 'a.new > 0.5', 'c.old < 1']);
    expect(unknownScopes(rules, ['a', 'b'])).toEqual(['c']);
    expect(() => parseGateRules(['all.delta < 0', 'oops'])).toThrow(GateRuleError);
  });
});

const lookup: GateLookup = (scope, statistic) =>
  scope === 'none'
    ? { value: null, why: 'no estimate: rewards outside [0, 1]' }
    : {
        value: statistic === 'delta' ? { estimate: -0.05, lo: -0.071, hi: -0.029 } : { estimate: 0.5, lo: 0.5, hi: 0.5 },
        basis: 'test basis',
      };

describe('checking a rule', () => {
  it('fails the gate when the rule holds, with one line naming the rule, the estimate and its interval', () => {
    const o = checkGate(parseGateRule('all.delta(mean/reward) < -0.02'), lookup);
    expect(o).toMatchObject({ failed: true, compared: -0.05, threshold: -0.02 });
    expect(o.line).toBe(
      'Gate failed: all.delta(mean/reward) < -0.02 holds: delta(mean/reward) of all agents −0.0500 [−0.0710, −0.0290] (test basis)',
    );
  });

  it('compares the bound asked for', () => {
    expect(checkGate(parseGateRule('a.delta.upper < -0.03'), lookup)).toMatchObject({ failed: false, compared: -0.029 });
    expect(checkGate(parseGateRule('a.delta.lower < -0.07'), lookup)).toMatchObject({ failed: true, compared: -0.071 });
    const passed = checkGate(parseGateRule('a.delta.upper < -0.03'), lookup);
    expect(passed.line).toMatch(/^Gate passed: a\.delta\(mean\/reward\)\.upper < -0\.03 does not hold: delta\(mean\/reward\) of agent a /);
    expect(checkGate(parseGateRule('a.new > 0.4'), lookup).line).toContain('new(mean/reward) of agent a 0.5000 (exact)');
  });

  it('compares as the user reads the number: rounding noise is not a regression', () => {
    const noisy: GateLookup = () => ({ value: { estimate: 0.18 - 0.2, lo: -0.02, hi: -0.02 }, basis: 'b' });
    expect(0.18 - 0.2 < -0.02).toBe(true);
    expect(checkGate(parseGateRule('all.delta < -0.02'), noisy).failed).toBe(false);
    expect(checkGate(parseGateRule('all.delta <= -0.02'), noisy).failed).toBe(true);
  });

  it('fails a rule that cannot be evaluated, saying why', () => {
    const [o] = checkGates([parseGateRule('none.delta < 0')], lookup);
    expect(o).toMatchObject({ failed: true, compared: null, value: null });
    expect(o.line).toBe(
      'Gate failed: none.delta(mean/reward) < 0: cannot be evaluated, no estimate: rewards outside [0, 1] (a gate never passes without its number)',
    );
  });
});

describe("a run's final live estimate as the gate's numbers", () => {
  const iv = (estimate: number, lo: number, hi: number) => ({ estimate, lo, hi });
  const view = {
    tasks: { seen: 100, pending: 2, planned: 100 },
    oldMean: iv(0.5, 0.5, 0.5),
    newMean: iv(0.45, 0.44, 0.46),
    delta: iv(-0.05, -0.06, -0.04),
    flipsUp: iv(0.01, 0.01, 0.02),
    flipsDown: iv(0.06, 0.06, 0.07),
  };
  const estimate = { confidence: 0.9, all: view, perAgent: { a: view, b: { tasks: view.tasks, off: 'a reward outside [0, 1]' } } };

  it('takes each statistic from its field, with the level and the tasks in', () => {
    const l = liveGateLookup(estimate, 'none');
    expect(l('all', 'flips-down')).toEqual({
      value: { estimate: 0.06, lo: 0.06, hi: 0.07 },
      basis: "the run's live estimate at its end, 90% confidence sequence, 100/100 tasks, 2 pending",
    });
    expect(l('a', 'new').value).toEqual({ estimate: 0.45, lo: 0.44, hi: 0.46 });
    expect(l('a', 'old').value).toEqual({ estimate: 0.5, lo: 0.5, hi: 0.5 });
    expect(l('b', 'delta')).toEqual({ value: null, why: 'no estimate: a reward outside [0, 1]' });
    expect(liveGateLookup(null, 'the run kept none')('all', 'delta')).toEqual({ value: null, why: 'the run kept none' });
  });
});
