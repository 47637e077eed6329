import { guardDecision, type GuardDecision } from '../src/run-checks/guard-decision.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/**
 * Guard phase (spec §4.3): the guard's decision (src/run-checks/guard-decision.ts), made here when
 * `reverify run` did not make it before it started the workflow (--no-worker, an attach).
 */
export function guardReverifyModes(deps: ActivityDeps) {
  return (servers: Array<{ name: string; url: string }>, force: boolean, timeoutMs: number): Promise<GuardDecision> =>
    failFastOnUserError(() => whileHeartbeating(() => guardDecision(deps.verifier(timeoutMs), servers, force)));
}
