/**
 * Chosen rows whose judge verdict "cannot be scored", as judge-backed NeMo Gym servers report it
 * (frontierscience, gdpval): the grade with `reward: 0.0` and `invalid_judge_response: true`, and
 * `invalid_judge_retryable: false` when asking again would not help. Rows are chosen by key, each
 * for all its gradings or only its first N, so tests know every attempt's answer in advance.
 */

/** One chosen row: `task:rollout` (JSON texts of the indices), gradings flagged, and whether retryable. */
export interface InvalidJudgeRule {
  key: string;
  /** How many of the row's gradings are flagged (from its first one); Infinity: all. */
  times: number;
  retryable: boolean;
}

const ENTRY = /^\s*(-?\d+):(-?\d+)(?:@(\d+))?\s*$/;

/**
 * Parses `task:rollout[@N],...` (a comma-separated string or a list of them): `3:0` flags every
 * grading of row (3, 0), `3:0@2` its first two. Throws on an entry of another shape.
 */
export function parseInvalidJudgeRules(given: string | readonly string[], retryable: boolean): InvalidJudgeRule[] {
  const entries = (typeof given === 'string' ? [given] : given).flatMap((g) => g.split(',')).filter((e) => e.trim() !== '');
  return entries.map((entry) => {
    const m = ENTRY.exec(entry);
    if (!m) throw new Error(`invalid-judge row '${entry}': expected TASK:ROLLOUT or TASK:ROLLOUT@N (integers)`);
    return { key: `${m[1]}:${m[2]}`, times: m[3] === undefined ? Infinity : Number(m[3]), retryable };
  });
}

/** The fields an invalid verdict adds to a grade. */
export type InvalidJudgeFields = { reward: 0; invalid_judge_response: true; invalid_judge_retryable?: false };

/** Decides, grading by grading, which answers carry an invalid verdict. */
export class InvalidJudges {
  private readonly rules = new Map<string, InvalidJudgeRule>();
  private readonly gradings = new Map<string, number>();

  constructor(rules: readonly InvalidJudgeRule[]) {
    for (const r of rules) this.rules.set(r.key, r);
  }

  /** For the next grading of row `key` (`task:rollout`): the invalid-verdict fields, or null for a normal grade. */
  next(key: string): InvalidJudgeFields | null {
    const rule = this.rules.get(key);
    if (!rule) return null;
    const n = (this.gradings.get(key) ?? 0) + 1;
    this.gradings.set(key, n);
    if (n > rule.times) return null;
    return rule.retryable
      ? { reward: 0, invalid_judge_response: true }
      : { reward: 0, invalid_judge_response: true, invalid_judge_retryable: false };
  }
}
