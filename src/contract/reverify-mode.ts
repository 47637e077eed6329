/** The answer of `GET /reverify_mode` (spec §2.1) and what the guard makes of it (§4.3). */
import { compareCodePoints } from './row-key.js';

/** The three values a resources server may answer. */
export const REVERIFY_MODES = ['stateless', 'unsupported', 'unknown'] as const;

/** One of `REVERIFY_MODES`. */
export type ReverifyMode = (typeof REVERIFY_MODES)[number];

/** True if a parsed `/reverify_mode` body is one of the three values (anything else fails the run). */
export function isReverifyMode(body: unknown): body is ReverifyMode {
  return typeof body === 'string' && (REVERIFY_MODES as readonly string[]).includes(body);
}

/** Servers the guard objects to (§6 checks 96–97): those not `stateless`, sorted by name. */
export function guardOffenders(modes: Record<string, ReverifyMode>): string[] {
  return Object.keys(modes)
    .filter((name) => modes[name] !== 'stateless')
    .sort(compareCodePoints);
}
