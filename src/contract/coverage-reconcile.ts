/**
 * The coverage file's reconciliation check (the run store's `reconciled`): every expected rollout
 * has exactly one disposition, so `expected = successful + failed + intentionally_omitted + unknown
 * + never_dispatched`. Asserted when the file is written (src/io/coverage-file.ts); a file read back
 * that breaks it (edited, or written by another tool) is reported, not refused.
 */

/** The numbers the check adds up; a file of another tool may lack some. */
export interface ReconciledCounts {
  expected?: unknown;
  successful?: unknown;
  failed?: unknown;
  intentionally_omitted?: unknown;
  unknown?: unknown;
  never_dispatched?: unknown;
}

const PARTS = ['successful', 'failed', 'intentionally_omitted', 'unknown', 'never_dispatched'] as const;

/**
 * What breaks the check, as one phrase (`expected 10 != 9 = 5 successful + ...`); null when it holds,
 * or when the file does not carry all six numbers (nothing to check).
 */
export function reconciliationGap(c: ReconciledCounts): string | null {
  const parts = PARTS.map((k) => c[k]);
  if (typeof c.expected !== 'number' || !parts.every((v): v is number => typeof v === 'number')) return null;
  const sum = parts.reduce((a, b) => a + b, 0);
  if (sum === c.expected) return null;
  return `expected ${c.expected} != ${sum} = ${PARTS.map((k, i) => `${parts[i]} ${k}`).join(' + ')}`;
}

/** The line `--resume` prints for a coverage file read back that does not reconcile. */
export function unreconciledNotice(path: string, gap: string): string {
  return `Warning: the coverage file ${path} does not reconcile (${gap}); its saved attempt cap is used, its counts are rewritten when the outputs open`;
}
