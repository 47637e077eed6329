/**
 * The guard's decision (spec §4.3), in one place: made by `reverify run` before it starts a workflow
 * (src/cli/precheck.ts; the spec carries it as `guarded`), else by the guard activity.
 */
import { UNSAFE_PREFIX } from '../contract/keys.js';
import { ConfigError } from '../contract/errors.js';
import { guardError, guardWarning } from '../contract/messages.js';
import { guardOffenders, type ReverifyMode } from '../contract/reverify-mode.js';
import type { VerifierClient } from '../verifier/client.js';

/** What the guard decided: the output prefix and the warning to print at start and end. */
export interface GuardDecision {
  prefix: '' | typeof UNSAFE_PREFIX;
  warning: string | null;
}

/**
 * `GET /reverify_mode` on every resources server, one after another. Servers answering
 * `unsupported` or `unknown` fail the run with the spec's message, or with `force` make the output
 * `unsafe_`-prefixed and produce the warning.
 */
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
