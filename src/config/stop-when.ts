/**
 * `--stop-when` at the CLI boundary: each value parsed into a rule (src/contract/stop-rules.ts, the
 * grammar), and the runs where a rule on the live estimate cannot hold refused with one line.
 */
import { z } from 'zod';
import { needsEstimate, parseStopRule, stopRuleText, type StopRule } from '../contract/stop-rules.js';

/** The rules of the `--stop-when` values, in the order given; a value that is not a rule is an issue. */
export function stopRulesOf(texts: string[], ctx: z.core.$RefinementCtx<string[]>): StopRule[] {
  const rules: StopRule[] = [];
  for (const text of texts) {
    try {
      rules.push(parseStopRule(text));
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: [], message: (err as Error).message });
      return z.NEVER;
    }
  }
  return rules;
}

/**
 * Why these options cannot stop on these rules (null: they can). An ATIF run cannot be resumed, so
 * the rollouts a stop leaves could never be verified later. Rules on the live estimate: recovery
 * has no old rewards, hence no estimate; in file order the rows done first are not a random sample
 * of the planned tasks, so the interval would not hold (docs/statistics.md).
 */
export function stopRulesRefusal(o: { stopWhen: StopRule[]; inputFormat: string; judgeFailedOnly: boolean; order: string }): string | null {
  if (o.stopWhen.length > 0 && o.inputFormat === 'atif')
    return '--stop-when is not available with --input-format atif: an ATIF run cannot be resumed, so the rollouts it never started could not be verified later; use --limit N instead';
  const rule = o.stopWhen.find(needsEstimate);
  if (rule === undefined) return null;
  const flag = `--stop-when ${stopRuleText(rule)}`;
  const budget = 'use rows>=N or requests>=N';
  if (o.judgeFailedOnly)
    return `${flag} needs the live estimate, which recovery (--judge-failed-only) does not have (no old rewards): ${budget}`;
  if (o.order !== 'random')
    return `${flag} needs --order random: in file order the rows verified first are not a random sample of the tasks, so its interval would not hold; add --order random`;
  return null;
}
