/**
 * The plan phase's fast path for the common line: a JSON object with plain integer indices (and,
 * for inputs, a route seen before), checked by a byte scanner (`json-line-scan.ts`) instead of
 * `JSON.parse`. It only ever accepts a line the full path accepts with the same result; every other
 * line (bad JSON, invalid UTF-8, a shape problem, a task row, an unroutable agent, big or
 * non-plain indices) returns `null`, and the caller runs the full path on it, which gives the exact
 * same decision and error message as before.
 */
import {
  AGENT_REF_KEY,
  ENVIRONMENT_SERVER_KEY,
  RESPONSE_KEY,
  ROLLOUT_INDEX_KEY,
  TASK_INDEX_KEY,
  TASK_INPUT_KEY,
  TASK_SOURCE_KEY,
} from '../contract/keys.js';
import type { RoutingTable } from '../config/routing.js';
import { MemberNames, smallIntAt } from '../contract/json-line-scan.js';
import { isVouchedLine } from '../io/scanned-lines.js';
import type { ScannedRead } from '../io/scan-ahead.js';
import { routeInputRow } from './input-route.js';
import type { Names } from './names.js';

const LBRACE = 0x7b;

/**
 * `keyId` of a scanned line whose indices (the first two wanted members: `slots[0..3]`) are both
 * plain non-negative integers (`keyId` gives their digits), or `null`: other keys (absent, big,
 * signed, fractional, strings…) take the full path.
 */
export function plainKeyId(b: Buffer, slots: Int32Array): string | null {
  const task = slots[0] < 0 ? -1 : smallIntAt(b, slots[0], slots[1]);
  const rollout = slots[2] < 0 ? -1 : smallIntAt(b, slots[2], slots[3]);
  if (task < 0 || rollout < 0) return null;
  return `["${task}","${rollout}"]`;
}

const SOURCE = new MemberNames([TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, RESPONSE_KEY]);

/** Reads rollout (source) lines outside recovery. */
export class FastSourceRows {
  /** The members scanned for (a `ScanAhead` of the file scans for these). */
  static readonly names = SOURCE.names;
  private readonly slots = SOURCE.slots();

  /**
   * The key id of a rollouts line that is a valid row (a JSON object with plain integer indices and
   * an object `response`), or `null`: then use the full path. `scanned`: the read's scan by a
   * `ScanAhead` thread, line `start, end` being its line `k`.
   */
  keyId(b: Buffer, start: number, end: number, scanned: ScannedRead | null = null, k = 0): string | null {
    const s = this.slots;
    if (!isVouchedLine(b, start, end, SOURCE, s, scanned, k)) return null;
    if (s[4] < 0 || b[s[4]] !== LBRACE) return null;
    return plainKeyId(b, s);
  }
}

const INPUT = new MemberNames([TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, TASK_SOURCE_KEY, TASK_INPUT_KEY]);
/** Distinct routes remembered (a run has a handful; the cache is cleared if a file has more). */
const MAX_ROUTES = 10_000;

/** Reads materialized inputs lines. */
export class FastInputRows {
  /** The members scanned for (a `ScanAhead` of the file scans for these). */
  static readonly names = INPUT.names;
  private readonly slots = INPUT.slots();
  /** Raw texts of a row's routing members → its interned agent and server. */
  private readonly routes = new Map<string, { agent: number; server: number }>();

  constructor(
    private readonly routing: RoutingTable,
    private readonly agents: Names,
    private readonly servers: Names,
  ) {}

  /** The raw text of member `i`'s value in the last scanned line, or '' when absent. */
  private raw(b: Buffer, i: number): string {
    const s = this.slots;
    return s[2 * i] < 0 ? '' : b.toString('utf8', s[2 * i], s[2 * i + 1]);
  }

  /**
   * Key id, agent and server ids of an inputs line that is a usable, routable row with plain
   * integer indices and no task input object, or `null`: then use the full path. `scanned`: as
   * for `FastSourceRows.keyId`.
   */
  read(
    b: Buffer,
    start: number,
    end: number,
    scanned: ScannedRead | null = null,
    k = 0,
  ): { key: string; agent: number; server: number } | null {
    const s = this.slots;
    if (!isVouchedLine(b, start, end, INPUT, s, scanned, k)) return null;
    if (s[10] >= 0 && b[s[10]] === LBRACE) return null; // a task row: its route is in its task input
    const key = plainKeyId(b, s);
    if (key === null) return null;
    // The members the route and the row check read, besides the indices (absent: an empty text).
    const routeText = `${this.raw(b, 2)}\u0000${this.raw(b, 3)}\u0000${this.raw(b, 4)}\u0000${this.raw(b, 5)}`;
    let route = this.routes.get(routeText);
    if (route === undefined) {
      const row: Record<string, unknown> = { [TASK_INDEX_KEY]: smallIntAt(b, s[0], s[1]), [ROLLOUT_INDEX_KEY]: smallIntAt(b, s[2], s[3]) };
      const members = [AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, TASK_SOURCE_KEY, TASK_INPUT_KEY];
      for (let m = 0; m < members.length; m++) {
        const text = this.raw(b, m + 2);
        if (text !== '') row[members[m]] = JSON.parse(text) as unknown;
      }
      let found: { agent: string; server: string };
      try {
        found = routeInputRow(row, '', this.routing, '');
      } catch {
        return null;
      }
      if (this.routes.size >= MAX_ROUTES) this.routes.clear();
      route = { agent: this.agents.id(found.agent), server: this.servers.id(found.server) };
      this.routes.set(routeText, route);
    }
    return { key, agent: route.agent, server: route.server };
  }
}
