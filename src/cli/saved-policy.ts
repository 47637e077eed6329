/**
 * The policies saved with a run (its coverage file) that a `--resume` keeps unless told otherwise,
 * as the seed's `pending(max_attempts, retry_terminal_timeouts, dispatch_longest_first)` "retains
 * the saved timeout policy unless explicitly changed": `retry_terminal_timeouts` and
 * `dispatch_longest_first`. A flag given (`--x`, or `--no-x` to turn a saved one off) wins; absent,
 * the saved value; nothing saved (a new run, or a run saved before the policy existed), off. One
 * rule for both the run (attempt-cap.ts) and the read-only preview (`reverify status`).
 */
import { ConfigError } from '../contract/errors.js';
import { savedLongestFirstNotice, savedPolicyOffNotice, savedTimeoutPolicyNotice } from '../contract/messages.js';
import { TWO_ORDERS } from '../config/run-options.js';

/** The policies as the coverage file saves them (absent: a file written before them, or by another tool). */
export interface SavedPolicies {
  retry_terminal_timeouts?: boolean;
  dispatch_longest_first?: boolean;
}

/** The policy flags of a command: true, false (`--no-`), or absent (keep the saved one). */
export interface PolicyFlags {
  retryTerminalTimeouts?: boolean;
  dispatchLongestFirst?: boolean;
}

export type PoliciesInForce = Required<PolicyFlags>;

/** The policies in force, and a line for each saved one kept or turned off. */
export function policiesInForce(
  flags: PolicyFlags,
  saved: SavedPolicies | null,
  coverageFile: string,
): { inForce: PoliciesInForce; notices: string[] } {
  const notices: string[] = [];
  const decide = (given: boolean | undefined, was: boolean | undefined, flag: string, kept: string): boolean => {
    if (given === undefined && was === true) notices.push(kept);
    if (given === false && was === true) notices.push(savedPolicyOffNotice(flag, coverageFile));
    return given ?? was === true;
  };
  const inForce = {
    retryTerminalTimeouts: decide(
      flags.retryTerminalTimeouts,
      saved?.retry_terminal_timeouts,
      '--retry-terminal-timeouts',
      savedTimeoutPolicyNotice(coverageFile),
    ),
    dispatchLongestFirst: decide(
      flags.dispatchLongestFirst,
      saved?.dispatch_longest_first,
      '--dispatch-longest-first',
      savedLongestFirstNotice(coverageFile),
    ),
  };
  return { inForce, notices };
}

/** A saved longest-first meets `--order random`: one order of dispatch only. */
export function refuseTwoOrders(inForce: PoliciesInForce, order: string | undefined): void {
  if (inForce.dispatchLongestFirst && order === 'random') throw new ConfigError(TWO_ORDERS);
}
