/**
 * How a command ends on its `--fail-if` gates (src/stats/gate-rules.ts): the lines of the rules
 * that pass go with the command's other lines; those that fail are the error the command ends with
 * (exit status 5, `EXIT_GATE_FAILED`), one line each naming the rule, the estimate and its interval.
 */
import { ConfigError } from '../contract/errors.js';
import type { RunEstimateView } from '../contract/estimate-view.js';
import { checkGates, type GateLookup, type GateOutcome } from '../stats/gate-check.js';
import { liveGateAgents, liveGateLookup } from '../stats/gate-live.js';
import { ALL_AGENTS, GATE_EXAMPLE, GateRuleError, parseGateRules, unknownScopes, type GateRule } from '../stats/gate-rules.js';

/** One or more `--fail-if` rules hold (or cannot be evaluated): its message is their lines. */
export class GateFailedError extends Error {
  override readonly name = 'GateFailedError';
  constructor(readonly outcomes: GateOutcome[]) {
    super(
      outcomes
        .filter((o) => o.failed)
        .map((o) => o.line)
        .join('\n'),
    );
  }
}

/** The `--fail-if` rules of a command, parsed before it does anything; a bad one is a user error (exit 1). */
export function gateRulesOf(texts: readonly string[] | undefined): GateRule[] {
  try {
    return parseGateRules(texts ?? []);
  } catch (err) {
    if (err instanceof GateRuleError) throw new ConfigError(err.message);
    throw err;
  }
}

/** A rule naming an agent the numbers do not have is a user error (exit 1), not a failed gate. */
export function refuseUnknownAgents(rules: readonly GateRule[], agents: readonly string[], where: string): void {
  const unknown = unknownScopes(rules, agents);
  if (unknown.length === 0) return;
  const rule = rules.find((r) => r.scope === unknown[0])!;
  const known = agents.length === 0 ? 'none' : [...agents].sort().join(', ');
  throw new ConfigError(
    `--fail-if '${rule.text}': ${where} has no agent '${unknown[0]}' (its agents: ${known}); name one of them or '${ALL_AGENTS}', e.g. ${GATE_EXAMPLE}`,
  );
}

/**
 * Checks the rules on the lookup's numbers: the passing lines go to `out`; when any rule fails,
 * throws `GateFailedError` (the failing lines, exit 5). Returns the outcomes (for `--json`).
 */
export function enforceGates(outcomes: GateOutcome[], out: (line: string) => void): GateOutcome[] {
  for (const o of outcomes) if (!o.failed) out(o.line);
  if (outcomes.some((o) => o.failed)) throw new GateFailedError(outcomes);
  return outcomes;
}

/** The outcomes of `rules` on `lookup`, after refusing agents it does not know. */
export function gateOutcomes(rules: readonly GateRule[], lookup: GateLookup, agents: readonly string[], where: string): GateOutcome[] {
  refuseUnknownAgents(rules, agents, where);
  return checkGates(rules, lookup);
}

/** `run --fail-if`: the rules on the run's final live estimate (src/stats/gate-live.ts); none without rules. */
export function runGates(failIf: readonly string[], estimate: RunEstimateView | null | undefined): GateOutcome[] {
  const rules = gateRulesOf(failIf);
  if (rules.length === 0) return [];
  const lookup = liveGateLookup(estimate, 'the run kept no live estimate (a run started by an earlier version)');
  // Without an estimate every rule is unavailable (a failed gate), whatever agent it names.
  const agents = estimate ? liveGateAgents(estimate) : rules.map((r) => r.scope);
  return gateOutcomes(rules, lookup, agents, "the run's estimate");
}
