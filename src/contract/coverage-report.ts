import { compareCodePoints } from './row-key.js';

/**
 * NeMo Gym 0.7.0's coverage report, printed after the result lines when the score does not cover
 * every rollout: `scored` rows in the main output, `missing` rollouts whose last attempt is in the
 * sidecar, the failure classes of the sidecar rows this run wrote (by name), and the sidecar's path.
 * Nothing when nothing is missing.
 */
export function coverageReport(scored: number, missing: number, routed: ReadonlyMap<string, number> | null, sidecar: string): string[] {
  if (missing <= 0) return [];
  const expected = scored + missing;
  const classes = [...(routed ?? new Map<string, number>()).entries()]
    .sort(([a], [b]) => compareCodePoints(a, b))
    .map(([name, count]) => `${count} ${name}`)
    .join(', ');
  const routedText = classes ? `${classes} routed this run; ` : '';
  return [
    `Rollouts missing from the score: ${missing} of ${expected} materialized (${routedText}see ${sidecar})`,
    `Metrics cover: ${scored} of ${expected} rollouts`,
  ];
}
