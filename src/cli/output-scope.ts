/**
 * The output is the unit a user thinks in: a run's views (`reverify status`, the end summary) say
 * first what the output holds across every invocation that wrote it (fresh, resumed, extended,
 * recovered), counted from its files (the coverage), then the current invocation's own figures.
 */
import type { Coverage } from '../contract/coverage.js';

/** What the current invocation did: rollouts (a finished one) or attempts (a live one) planned, and scored. */
export interface InvocationFigures {
  planned: number | null;
  scored: number;
  unit: 'rollouts' | 'attempts';
}

/**
 * `Scored: 392/400 rollouts of the output, 8 not (2 invocations wrote it); this invocation: 6 rollouts planned, 6 scored`.
 * `invocations`: how many `reverify run` invocations wrote the output (null: not known).
 */
export function outputScopeLine(cov: Coverage, mine: InvocationFigures | null, invocations: number | null = null): string {
  const not = cov.expected - cov.successful;
  const by = invocations === null ? 'every run that wrote it' : `${invocations} invocation${invocations === 1 ? '' : 's'} wrote it`;
  const own = mine ? `; this invocation: ${mine.planned ?? '?'} ${mine.unit} planned, ${mine.scored} scored` : '';
  return `Scored: ${cov.successful}/${cov.expected} rollouts of the output${not > 0 ? `, ${not} not` : ''} (${by})${own}`;
}
