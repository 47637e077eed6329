/**
 * The run's budget of `/verify` requests (`--max-requests`), pure and deterministic (the workflow
 * imports it). Every try counts, retries included. The workflow gives each batch it launches an
 * allowance (the requests it may make) out of what is left after the requests made and the
 * allowances of the batches in flight, so the run never makes more than its budget, whatever the
 * number of workers. A batch that spends its allowance before its last row hands its unfinished
 * rows back (held, not failed); the run pauses when nothing is left, until an operator raises it.
 */

/** The run's budget and its use: state carried across continue-as-new. */
export interface Budget {
  /** Most `/verify` requests of the whole run; null: no budget. */
  maxRequests: number | null;
  /** Requests made so far, as the batches reported them (every try). */
  requestsUsed: number;
}

/** Requests a batch may make beyond one per row: a few retries without handing rows back. */
export function batchShare(rows: number, parallelism: number): number {
  return rows + parallelism;
}

/** Requests neither made nor promised to a batch in flight (never below 0). */
export function requestsLeft(b: Budget, allowancesInFlight: Iterable<number>): number {
  if (b.maxRequests === null) return Number.POSITIVE_INFINITY;
  let promised = 0;
  for (const a of allowancesInFlight) promised += a;
  return Math.max(0, b.maxRequests - b.requestsUsed - promised);
}

/** The allowance of a batch of `rows` rows at `parallelism` lanes: its share, or what is left if less. */
export function batchAllowance(rows: number, parallelism: number, left: number): number {
  return Math.min(batchShare(rows, parallelism), left);
}

/** True when the budget is spent: every request of it was made. */
export function budgetSpent(b: Budget): boolean {
  return b.maxRequests !== null && b.requestsUsed >= b.maxRequests;
}

/** `15/100` (or just `15` without a budget), for progress lines. */
export function requestsShown(b: Budget): string {
  return b.maxRequests === null ? String(b.requestsUsed) : `${b.requestsUsed}/${b.maxRequests}`;
}

/** An argument as a POSIX shell reads it: quoted only when it must be. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The line printed when the run pauses on its budget: the requests made, and the command that
 * raises it (by `unsent` more, the attempts planned but not answered yet: enough to finish the
 * round when nothing is retried).
 */
export function budgetSpentMessage(b: Budget, outputPath: string, unsent: number): string {
  const raise = (b.maxRequests ?? b.requestsUsed) + Math.max(1, unsent);
  return (
    `Paused: the request budget is spent (${b.requestsUsed} of --max-requests ${b.maxRequests} /verify requests made); ` +
    `unsent rows wait. Raise it with: reverify control -o ${shellWord(outputPath)} --max-requests ${raise}`
  );
}
