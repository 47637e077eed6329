/**
 * `reverify run` on a spec fixture (spec-fixtures.ts) against one scripted resources server
 * (scripted-server.ts), and the keys that server received.
 */
import { runReverify, type RunOutcome } from './run-fixtures.js';
import { keyText, type ScriptedServer } from './scripted-server.js';
import type { Fixture } from './spec-fixtures.js';

/** A single pass over the fixture with `--server rs=<rs>` (plus `extra` options). */
export function plain(f: Fixture, rs: ScriptedServer, extra: Record<string, unknown> = {}): Promise<RunOutcome> {
  return runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')], ...extra });
}

/** `plain` with `--judge-failed-only` (recovery from the fixture's sidecar). */
export function recover(f: Fixture, rs: ScriptedServer, extra: Record<string, unknown> = {}): Promise<RunOutcome> {
  return plain(f, rs, { judgeFailedOnly: true, ...extra });
}

/** Keys of the rows a server received on /verify, sorted. */
export const sentKeys = (s: ScriptedServer) => s.verifyBodies.map(keyText).sort();

/** Keys of each /aggregate_metrics call a server received, in the order sent. */
export const aggregatedKeys = (s: ScriptedServer) => s.aggregateBodies.map((b) => b.verify_responses.map(keyText));
