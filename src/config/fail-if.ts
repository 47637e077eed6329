import type { InputFormat } from '../contract/atif-messages.js';
import { GateRuleError, parseGateRules } from '../stats/gate-rules.js';

/**
 * `--fail-if`: each rule parsed (the first bad one said, with an example), and only on runs that
 * keep a live estimate (not ATIF, not `--judge-failed-only`); null when fine.
 */
export function gateRefusal(o: { failIf: string[]; inputFormat: InputFormat; judgeFailedOnly: boolean }): string | null {
  if (o.failIf.length === 0) return null;
  try {
    parseGateRules(o.failIf);
  } catch (err) {
    if (err instanceof GateRuleError) return err.message;
    throw err;
  }
  const without = o.inputFormat === 'atif' ? '--input-format atif' : o.judgeFailedOnly ? '--judge-failed-only' : null;
  if (without === null) return null;
  return `--fail-if is checked on the run's live estimate, which a run with ${without} does not keep: leave --fail-if out and, after the run, check the files with \`reverify report -o OUT --fail-if RULE\``;
}
