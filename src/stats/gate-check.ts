/**
 * Evaluates `--fail-if` rules (gate-rules.ts) on the numbers of a command: each rule gets one line
 * naming it, the estimate and its interval, and whether it holds. A rule that holds fails the gate;
 * so does one that cannot be evaluated (no estimate): a CI gate never passes on missing numbers.
 */
import { ALL_AGENTS, ruleText, STATISTIC_NAMES, type GateOp, type GateRule, type GateStatistic } from './gate-rules.js';

/** An estimate and its interval. */
export interface GateValue {
  estimate: number;
  lo: number;
  hi: number;
}

/** What a source says of one statistic: its value and what the interval is, or why there is none. */
export type GateEvidence = { value: GateValue; basis: string } | { value: null; why: string };

/** The statistic of a scope (`all` or an agent) as the command has it. */
export type GateLookup = (scope: string, statistic: GateStatistic) => GateEvidence;

export interface GateOutcome {
  rule: string;
  scope: string;
  statistic: string;
  bound: GateRule['bound'];
  op: GateOp;
  threshold: number;
  /** The number compared (the estimate, or a bound of its interval); null when there is none. */
  compared: number | null;
  value: GateValue | null;
  /** True when the rule holds or cannot be evaluated: the gate fails. */
  failed: boolean;
  line: string;
}

/**
 * Values are compared rounded to 9 decimals, so a delta computed as −0.020000000000000018 is
 * −0.02 (`< -0.02` does not hold) as the user reads it.
 */
const DECIMALS = 1e9;

function holds(x: number, op: GateOp, t: number): boolean {
  const v = Math.round(x * DECIMALS) / DECIMALS;
  if (op === '<') return v < t;
  if (op === '<=') return v <= t;
  if (op === '>') return v > t;
  return v >= t;
}

/** `−0.0500` (a delta: `+0.0100`), with the minus sign the other views use. */
function num(x: number, signed: boolean): string {
  const s = x.toFixed(4);
  return signed && x >= 0 ? `+${s}` : s.replace(/^-/, '−');
}

/** `−0.0500 [−0.0710, −0.0290]`; a collapsed interval as `(exact)`. */
export function gateValueText(v: GateValue, signed: boolean): string {
  if (v.lo === v.hi) return `${num(v.estimate, signed)} (exact)`;
  return `${num(v.estimate, signed)} [${num(v.lo, signed)}, ${num(v.hi, signed)}]`;
}

function scopeText(scope: string): string {
  return scope === ALL_AGENTS ? 'all agents' : `agent ${scope}`;
}

/** One rule on the lookup's numbers. */
export function checkGate(rule: GateRule, lookup: GateLookup): GateOutcome {
  const evidence = lookup(rule.scope, rule.statistic);
  const shown = ruleText(rule);
  const base = {
    rule: shown,
    scope: rule.scope,
    statistic: STATISTIC_NAMES[rule.statistic],
    bound: rule.bound,
    op: rule.op,
    threshold: rule.threshold,
  };
  if (evidence.value === null) {
    const line = `Gate failed: ${shown}: cannot be evaluated, ${evidence.why} (a gate never passes without its number)`;
    return { ...base, compared: null, value: null, failed: true, line };
  }
  const v = evidence.value;
  const compared = rule.bound === 'lower' ? v.lo : rule.bound === 'upper' ? v.hi : v.estimate;
  const failed = holds(compared, rule.op, rule.threshold);
  const what = `${STATISTIC_NAMES[rule.statistic]} of ${scopeText(rule.scope)} ${gateValueText(v, rule.statistic === 'delta')}`;
  const line = `Gate ${failed ? 'failed' : 'passed'}: ${shown} ${failed ? 'holds' : 'does not hold'}: ${what} (${evidence.basis})`;
  return { ...base, compared, value: v, failed, line };
}

/** Every rule, in the order given. */
export function checkGates(rules: readonly GateRule[], lookup: GateLookup): GateOutcome[] {
  return rules.map((r) => checkGate(r, lookup));
}
