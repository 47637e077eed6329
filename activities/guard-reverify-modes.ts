import { UNSAFE_PREFIX } from '../src/contract/keys.js';
import { ConfigError } from '../src/contract/errors.js';
import { guardError, guardWarning } from '../src/contract/messages.js';
import { guardOffenders, type ReverifyMode } from '../src/contract/reverify-mode.js';
import type { VerifierClient } from '../src/verifier/client.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/** What the guard decided: the output prefix and the warning to print at start and end. */
export interface GuardDecision {
  prefix: '' | typeof UNSAFE_PREFIX;
  warning: string | null;
}

/**
 * Guard phase (spec §4.3): `GET /reverify_mode` on every resources server of the routing table, one
 * after another. Servers answering `unsupported` or `unknown` fail the run with the spec's message,
 * or with `force` make the output `unsafe_`-prefixed and produce the warning.
 */
export function guardReverifyModes(deps: ActivityDeps) {
  return (servers: Array<{ name: string; url: string }>, force: boolean, timeoutMs: number): Promise<GuardDecision> =>
    failFastOnUserError(() => whileHeartbeating(() => guardDecision(deps.verifier(timeoutMs), servers, force)));
}

/** The body of the guard activity, also run by `reverify run` before it starts a workflow (precheck.ts). */
export async function guardDecision(
  client: Pick<VerifierClient, 'reverifyMode'>,
  servers: Array<{ name: string; url: string }>,
  force: boolean,
): Promise<GuardDecision> {
  const modes: Record<string, ReverifyMode> = {};
  for (const { name, url } of servers) modes[name] = await client.reverifyMode(name, url);
  const offenders = guardOffenders(modes);
  if (offenders.length === 0) return { prefix: '', warning: null };
  // The spec's exact text names NeMo Gym's Hydra override; say what to pass here as well.
  if (!force) throw new ConfigError(`${guardError(offenders)} With reverify, pass --force.`);
  return { prefix: UNSAFE_PREFIX, warning: guardWarning(offenders) };
}
