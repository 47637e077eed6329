/**
 * The rules of `--fail-if` (`reverify report`, `reverify run`): a gate for CI that ends the command
 * with its own exit status when an estimate crosses a line. One rule per flag:
 *
 *   rule      := scope "." statistic [ "." bound ] op number
 *   scope     := "all" | <agent name>              (as in the output's `agent_ref.name`)
 *   statistic := ("delta" | "new" | "old") [ "(mean/reward)" ] | "flips(0->1)" | "flips(1->0)"
 *   bound     := "lower" | "upper"                 (of the interval; without it, the estimate)
 *   op        := "<" | "<=" | ">" | ">="
 *   number    := a decimal such as -0.02, 0.5, 1e-3 ("−" is read as "-")
 *
 * e.g. `all.delta(mean/reward) < -0.02`, `agent_a.delta.upper < 0`, `all.flips(1->0) > 0.05`. The
 * rule holds when the value compares true; a rule that holds fails the gate. Pure: the numbers come
 * from a `GateLookup` (the report's task-clustered statistics, or a run's final live estimate).
 */

/** The scope of every agent together. */
export const ALL_AGENTS = 'all';

export const GATE_STATISTICS = ['delta', 'new', 'old', 'flips-up', 'flips-down'] as const;
export type GateStatistic = (typeof GATE_STATISTICS)[number];
export type GateBound = 'estimate' | 'lower' | 'upper';
export type GateOp = '<' | '<=' | '>' | '>=';

export interface GateRule {
  /** As given on the command line. */
  text: string;
  /** `all` or an agent's name. */
  scope: string;
  statistic: GateStatistic;
  bound: GateBound;
  op: GateOp;
  threshold: number;
}

/** A rule given wrongly: the message says what is wrong and shows an example (exit status 1). */
export class GateRuleError extends Error {
  override readonly name = 'GateRuleError';
}

export const GATE_EXAMPLE = "--fail-if 'all.delta(mean/reward) < -0.02'";

/** What a rule's statistic is shown as, e.g. `delta(mean/reward)`, `flips(1->0)`. */
export const STATISTIC_NAMES: Record<GateStatistic, string> = {
  delta: 'delta(mean/reward)',
  new: 'new(mean/reward)',
  old: 'old(mean/reward)',
  'flips-up': 'flips(0->1)',
  'flips-down': 'flips(1->0)',
};

const COMPARISON = /(<=|>=|==|!=|<|>|=)/;
const LEFT = /^(.+)\.(delta|new|old|flips)\s*(?:\(([^)]*)\))?\s*(?:\.\s*([A-Za-z]+))?$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const METRIC = 'mean/reward';
const SHAPE = '<all|agent>.<delta|new|old|flips(0->1)|flips(1->0)>[.lower|.upper] <op> <number>';

function refuse(text: string, what: string): never {
  throw new GateRuleError(`--fail-if '${text}': ${what}; e.g. ${GATE_EXAMPLE} (docs/usage.md, "Gates for CI")`);
}

/** The statistic a name and its argument stand for (the argument without spaces). */
function statisticOf(text: string, name: string, arg: string | undefined): GateStatistic {
  if (name === 'flips') {
    const a = (arg ?? '').replace(/\s+/g, '').replace(/→/g, '->');
    if (a === '0->1') return 'flips-up';
    if (a === '1->0') return 'flips-down';
    refuse(text, `flips takes (0->1) or (1->0), got ${arg === undefined ? 'nothing' : `(${arg})`}`);
  }
  if (arg !== undefined && arg.replace(/\s+/g, '') !== METRIC)
    refuse(text, `${name} is of ${METRIC} only (the reward's mean), got (${arg})`);
  return name as GateStatistic;
}

/** Why the left side (scope and statistic) is not one: the nearest mistake. */
function leftRefusal(text: string, left: string): never {
  if (left === '') refuse(text, `nothing before the comparison: expected ${SHAPE}`);
  const word = /^(.+?)\.\s*([A-Za-z_]\w*)/.exec(left);
  if (!word) refuse(text, `'${left}' names no statistic: expected ${SHAPE}`);
  refuse(text, `'${word[2]}' is not a statistic: use delta, new, old, flips(0->1) or flips(1->0)`);
}

/** One `--fail-if` rule, or `GateRuleError` saying what is wrong with it. */
export function parseGateRule(text: string): GateRule {
  if (text.trim() === '') refuse(text, 'the rule is empty');
  // A `>` inside the parentheses of flips(0->1) is not the comparison.
  const cut = COMPARISON.exec(text.replace(/\([^)]*\)/g, (p) => ' '.repeat(p.length)));
  if (!cut) refuse(text, 'no comparison (<, <=, >, >=)');
  const op = cut[1];
  if (op === '=' || op === '==' || op === '!=') refuse(text, `'${op}' is not a comparison of the gate: use <, <=, > or >=`);
  const left = text.slice(0, cut.index).trim();
  const numberText = text.slice(cut.index + op.length).trim();
  const m = LEFT.exec(left);
  if (!m) leftRefusal(text, left);
  const [, scopeText, name, arg, boundText] = m;
  const scope = scopeText.trim();
  if (/\s/.test(scope)) refuse(text, `the scope '${scope}' is not an agent name (no spaces)`);
  const statistic = statisticOf(text, name, arg);
  let bound: GateBound = 'estimate';
  if (boundText !== undefined) {
    if (boundText !== 'lower' && boundText !== 'upper') refuse(text, `.${boundText} is not a bound: use .lower or .upper of the interval`);
    bound = boundText;
  }
  const number = numberText.replace(/^−/, '-');
  if (!NUMBER.test(number)) refuse(text, numberText === '' ? 'no number after the comparison' : `'${numberText}' is not a number`);
  return { text: text.trim(), scope, statistic, bound, op: op as GateOp, threshold: Number(number) };
}

/** Every rule of the repeated flag, parsed before anything runs. */
export function parseGateRules(texts: readonly string[]): GateRule[] {
  return texts.map(parseGateRule);
}

/** A rule in one canonical form: `all.delta(mean/reward).upper < 0`. */
export function ruleText(r: GateRule): string {
  return `${r.scope}.${STATISTIC_NAMES[r.statistic]}${r.bound === 'estimate' ? '' : `.${r.bound}`} ${r.op} ${r.threshold}`;
}

/** The rule's scopes that are not agents of `agents` (nor `all`). */
export function unknownScopes(rules: readonly GateRule[], agents: readonly string[]): string[] {
  const known = new Set(agents);
  return [...new Set(rules.map((r) => r.scope).filter((s) => s !== ALL_AGENTS && !known.has(s)))];
}
