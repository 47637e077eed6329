/**
 * The user-facing texts of runs that reuse outputs: recovery (`--judge-failed-only`), `--resume`
 * and the attempt cap saved with a run. Character for character as NeMo Gym prints them, or marked
 * "Ours". Re-exported by messages.ts, where every other text is.
 */

/**
 * NeMo Gym 0.7.0: `--judge-failed-only` on a recovery source holding a multi-stage row
 * (`stage_index`), refused before anything is written. Ours adds where (`<file>:<line>: `).
 */
export function multiStageRecovery(path: string, line: number): string {
  return (
    `${path}:${line}: --judge-failed-only does not support multi-stage rows; resume the multi-stage rollout ` +
    'collection so stage identity and adaptive references are preserved'
  );
}

/** §4.8: no payload remains (with or without resume). */
export function nothingToReverify(): string {
  return 'WARNING: Nothing to be re-verified.';
}

/** §4.6.1: printed at the start of a `--judge-failed-only` run. */
export function recoveryWarning(): string {
  return (
    'WARNING: judge-failed-only recovery merges rewards from TWO sources — the successful rollouts in ' +
    "--rollouts were scored by the ORIGINAL run's verifier/judge, while the recovered rows are scored by the " +
    'CURRENT verification config. If any crucial parameter (judge model, judge prompt/params, verifier config, ' +
    'etc.) changed between the original run and this recovery, the merged rewards are inconsistent. Ensure the ' +
    'verification config matches the original run.'
  );
}

/** §4.6.3: after seeding the successes into the output (the path is printed unquoted). */
export function seededSuccesses(n: number, path: string): string {
  return `Recovery mode: seeded ${n} successful rollout(s) into ${path}`;
}

/** §4.8: `--resume` with neither output file present. */
export function skippingResume(): string {
  return "Skipping resume_from_cache because cache paths don't exist!";
}

/** Counts of the resume summary of §4.8. */
export interface ResumeCounts {
  /** Payloads before the resume filter. */
  total: number;
  /** Keys already in the main output. */
  done: number;
  /** Keys with a terminal sidecar row. */
  terminal: number;
  /** Keys whose sidecar attempt count reached the cap. */
  maxed: number;
  /** Payloads left to verify. */
  remaining: number;
}

/**
 * §4.8: the multi-line resume summary (no trailing newline). The terminal line has NeMo Gym 0.7.0's
 * wording (`(for example skipped)`; the spec quotes the older `(timeout_exceeded / skipped)`): with
 * `--retry-terminal-timeouts` timeouts are no longer terminal.
 */
export function resumeSummary(c: ResumeCounts): string {
  return [
    'Resumed from cache. Found:',
    `- ${c.total} total rows to be re-verified`,
    `- ${c.done} rows already done (in main jsonl)`,
    `- ${c.terminal} sidecar-terminal (for example skipped) → not retried`,
    `- ${c.maxed} hit max_attempts → not retried`,
    `- ${c.remaining} rows that still need to be run`,
  ].join('\n');
}

/** Ours: `--extend-attempts` raises the cap saved with a run, so it needs one to resume. */
export function extendNeedsResume(): string {
  return '--extend-attempts raises the attempt cap saved with a run: use it with --resume (a new run takes --max-attempts)';
}

/**
 * Ours: a resumed run keeps the attempt cap saved with it (its coverage file), not today's
 * `--max-attempts` / `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS`.
 */
export function savedCapNotice(saved: number, today: number, from: string, coverageFile: string): string {
  return (
    `Attempt cap: ${saved}, as saved with the run in ${coverageFile}, not ${today} from ${from}; ` + 'to raise it, pass --extend-attempts N'
  );
}

/** Ours: `--resume` keeps the timeout policy the run saved (newer NeMo Gym's `pending` keeps it too). */
export function savedTimeoutPolicyNotice(coverageFile: string): string {
  return (
    `Retrying terminal timeouts (--retry-terminal-timeouts): on, as saved with the run in ${coverageFile}; ` +
    'a resume keeps the policy the run was started with'
  );
}

/** Ours: a resume keeps the longest-first dispatch saved with the run. */
export function savedLongestFirstNotice(coverageFile: string): string {
  return (
    `Dispatching longest first (--dispatch-longest-first): on, as saved with the run in ${coverageFile}; ` +
    '--no-dispatch-longest-first turns it off'
  );
}

/** Ours: a saved policy turned off by its `--no-` flag (`--no-retry-terminal-timeouts`). */
export function savedPolicyOffNotice(flag: string, coverageFile: string): string {
  return `${flag.replace(/^--/, '--no-')}: the ${flag} saved with the run in ${coverageFile} is off for this run, and saved off`;
}

/** Ours: the extension `--extend-attempts` records before planning. */
export function extendedCapNotice(saved: number, extension: number, added: number, coverageFile: string): string {
  return (
    `Attempt cap raised by ${added}: ${saved + extension} (${saved} saved + ${extension} extension), ` +
    `recorded in the run and in ${coverageFile}`
  );
}

/**
 * Keys `--resume` skips because their counted failures reached the attempt cap (newer NeMo Gym's
 * wording), naming the sidecar that holds them.
 */
export function budgetExhausted(n: number, cap: number, sidecar: string): string {
  return (
    `Retry budget exhausted for ${n} rollout(s) at the cap of ${cap} counted failures. ` +
    `They will not be dispatched with this cap. Failures: ${sidecar}.`
  );
}

/**
 * Ours (NeMo Gym 0.7.0 moves silently): recovery with `--retry-invalid-judge-responses` moved rows
 * flagged `invalid_judge_response` out of --rollouts into its sidecar.
 */
export function movedInvalidJudgeRows(r: { flagged: number; moved: number }, rollouts: string, sidecar: string): string {
  const earlier = r.flagged - r.moved;
  return (
    `Recovery mode: moved ${r.flagged} row(s) flagged invalid_judge_response out of ${rollouts} into ${sidecar} ` +
    `as judge_invalid, to be judged again` +
    (earlier > 0 ? ` (${earlier} of them were already there, from an interrupted earlier move)` : '')
  );
}
