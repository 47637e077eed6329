/**
 * `--stop-when RULE` (issue 32 item 3; docs/statistics.md "When to trust early stopping"): rules
 * that end a run's first pass early once the answer is clear. The grammar, parsed once here (the
 * CLI turns each flag into a `StopRule` of the spec; the workflow evaluates them):
 *
 *   delta-excludes-zero   the interval of the paired difference new − old over all agents excludes 0
 *   width<X               that interval is narrower than X (0 < X <= 1)
 *   rows>=N               N rows of the first pass are answered and committed
 *   requests>=N           N `/verify` requests were made (every try)
 *
 * Several rules may be given: at each commit the first one (in the order given) that holds fires.
 * Pure and deterministic: the workflow imports it.
 */

export type StopRule =
  | { kind: 'delta-excludes-zero' }
  | { kind: 'width-below'; width: number }
  | { kind: 'rows-at-least'; rows: number }
  | { kind: 'requests-at-least'; requests: number };

/** What a rule is evaluated on: committed counts only. `delta`: the live estimate's interval over all agents (null: none). */
export interface StopFacts {
  delta: { lo: number; hi: number } | null;
  rows: number;
  requests: number;
}

/** A rule that fired: its text, the first-pass rows committed when it did, and the rows planned. */
export interface StoppedEarly {
  rule: string;
  rows: number;
  planned: number;
}

const GRAMMAR = '`delta-excludes-zero`, `width<X` (0 < X <= 1), `rows>=N` or `requests>=N` (N a whole number >= 1)';

/** Parses one `--stop-when` value; throws an Error whose message says what is wrong and the grammar. */
export function parseStopRule(text: string): StopRule {
  const t = text.replace(/\s+/g, '');
  if (t === 'delta-excludes-zero') return { kind: 'delta-excludes-zero' };
  const width = /^width<(\d*\.?\d+(?:e-?\d+)?)$/i.exec(t);
  if (width) {
    const x = Number(width[1]);
    if (x > 0 && x <= 1) return { kind: 'width-below', width: x };
  }
  const count = /^(rows|requests)>=(\d+)$/.exec(t);
  if (count && Number(count[2]) >= 1 && Number.isSafeInteger(Number(count[2]))) {
    const n = Number(count[2]);
    return count[1] === 'rows' ? { kind: 'rows-at-least', rows: n } : { kind: 'requests-at-least', requests: n };
  }
  throw new Error(`--stop-when '${text}' is not a rule: use ${GRAMMAR}`);
}

/** The rule as the user writes it (canonical). */
export function stopRuleText(r: StopRule): string {
  switch (r.kind) {
    case 'delta-excludes-zero':
      return 'delta-excludes-zero';
    case 'width-below':
      return `width<${r.width}`;
    case 'rows-at-least':
      return `rows>=${r.rows}`;
    case 'requests-at-least':
      return `requests>=${r.requests}`;
  }
}

/** True for the rules read from the live estimate (they need one: not ATIF, not recovery, random order). */
export function needsEstimate(r: StopRule): boolean {
  return r.kind === 'delta-excludes-zero' || r.kind === 'width-below';
}

/** Whether one rule holds on these facts. A rule on the estimate never holds without one. */
export function ruleHolds(r: StopRule, f: StopFacts): boolean {
  switch (r.kind) {
    case 'delta-excludes-zero':
      return f.delta !== null && (f.delta.lo > 0 || f.delta.hi < 0);
    case 'width-below':
      return f.delta !== null && f.delta.hi - f.delta.lo < r.width;
    case 'rows-at-least':
      return f.rows >= r.rows;
    case 'requests-at-least':
      return f.requests >= r.requests;
  }
}

/** The first rule (in the order given) that holds, or null. */
export function firstFiring(rules: readonly StopRule[], f: StopFacts): StopRule | null {
  return rules.find((r) => ruleHolds(r, f)) ?? null;
}

/**
 * While the batches in flight at the stop finish: `stopped early: rows>=100 — finishing 3 batches in
 * flight` (the progress line, `reverify status`); once none is left, `stoppedEarlyText`.
 */
export function stoppingText(s: StoppedEarly, batchesInFlight: number): string {
  if (batchesInFlight < 1) return stoppedEarlyText(s);
  return `stopped early: ${s.rule} — finishing ${batchesInFlight} batch${batchesInFlight === 1 ? '' : 'es'} in flight`;
}

/** `stopped early: delta-excludes-zero at 120 of 400 rows`: the coverage block and the end summary say it. */
export function stoppedEarlyText(s: StoppedEarly): string {
  return `stopped early: ${s.rule} at ${s.rows} of ${s.planned} rows`;
}
