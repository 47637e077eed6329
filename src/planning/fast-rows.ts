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
/** The members a route and the row check read besides the indices: `INPUT`'s members 2–5. */
const ROUTE_MEMBERS = [AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, TASK_SOURCE_KEY, TASK_INPUT_KEY];
const FIRST_ROUTE_MEMBER = 2;

/** A route remembered: the routing members' bytes it was decided from (`routeBytes`) and its ids. */
interface Route {
  bytes: Buffer;
  agent: number;
  server: number;
}

/**
 * A hash of the routing members' spans in `slots` (FNV-1a of each one's length and last 16 bytes,
 * where names differ): it only picks the routes whose bytes are then compared (`sameRouteBytes`).
 */
function routeBytesHash(b: Buffer, slots: Int32Array): number {
  let h = 0x811c9dc5;
  for (let m = FIRST_ROUTE_MEMBER; m < FIRST_ROUTE_MEMBER + ROUTE_MEMBERS.length; m++) {
    const from = slots[2 * m];
    const to = from < 0 ? from : slots[2 * m + 1];
    h = Math.imul(h ^ (to - from), 0x01000193);
    for (let i = Math.max(from, to - 16); i < to; i++) h = Math.imul(h ^ b[i], 0x01000193);
  }
  return h >>> 0;
}

/** The routing members' spans as one buffer: for each, its length (u32; 0xffffffff: absent), then its bytes. */
function routeBytes(b: Buffer, slots: Int32Array): Buffer {
  const parts: Buffer[] = [];
  for (let m = FIRST_ROUTE_MEMBER; m < FIRST_ROUTE_MEMBER + ROUTE_MEMBERS.length; m++) {
    const from = slots[2 * m];
    const length = Buffer.alloc(4);
    length.writeUInt32LE(from < 0 ? 0xffffffff : slots[2 * m + 1] - from);
    parts.push(length, from < 0 ? Buffer.alloc(0) : b.subarray(from, slots[2 * m + 1]));
  }
  return Buffer.concat(parts);
}

/** The route among `candidates` (of one hash) whose bytes are the routing members' spans in `slots`. */
function knownRoute(candidates: Route[] | undefined, b: Buffer, slots: Int32Array): Route | undefined {
  if (candidates === undefined) return undefined;
  for (const r of candidates) if (sameRouteBytes(r.bytes, b, slots)) return r;
  return undefined;
}

/** Whether the routing members' spans in `slots` are the bytes `routeBytes` made of `bytes`. */
function sameRouteBytes(bytes: Buffer, b: Buffer, slots: Int32Array): boolean {
  let p = 0;
  for (let m = FIRST_ROUTE_MEMBER; m < FIRST_ROUTE_MEMBER + ROUTE_MEMBERS.length; m++) {
    const from = slots[2 * m];
    const length = from < 0 ? 0xffffffff : slots[2 * m + 1] - from;
    if (p + 4 > bytes.length || bytes.readUInt32LE(p) !== length) return false;
    p += 4;
    if (from < 0) continue;
    if (p + length > bytes.length || b.compare(bytes, p, p + length, from, from + length) !== 0) return false;
    p += length;
  }
  return p === bytes.length;
}

/** Reads materialized inputs lines. */
export class FastInputRows {
  /** The members scanned for (a `ScanAhead` of the file scans for these). */
  static readonly names = INPUT.names;
  private readonly slots = INPUT.slots();
  /** Routes by the bytes of a row's routing members (`routeBytesHash`, then the bytes compared). */
  private readonly routes = new Map<number, Route[]>();
  private routeCount = 0;

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

  /** The interned route of the last scanned line's members, or `null` when it has none (the full path says why). */
  private route(b: Buffer): { agent: number; server: number } | null {
    const s = this.slots;
    const row: Record<string, unknown> = { [TASK_INDEX_KEY]: smallIntAt(b, s[0], s[1]), [ROLLOUT_INDEX_KEY]: smallIntAt(b, s[2], s[3]) };
    for (let m = 0; m < ROUTE_MEMBERS.length; m++) {
      const text = this.raw(b, m + 2);
      if (text !== '') row[ROUTE_MEMBERS[m]] = JSON.parse(text) as unknown;
    }
    try {
      const found = routeInputRow(row, '', this.routing, '');
      return { agent: this.agents.id(found.agent), server: this.servers.id(found.server) };
    } catch {
      return null;
    }
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
    // The members the route and the row check read, besides the indices: their bytes, not their texts.
    const hash = routeBytesHash(b, s);
    let route = knownRoute(this.routes.get(hash), b, s);
    if (route === undefined) {
      const found = this.route(b);
      if (found === null) return null;
      if (this.routeCount >= MAX_ROUTES) {
        this.routes.clear();
        this.routeCount = 0;
      }
      route = { ...found, bytes: routeBytes(b, s) };
      this.routes.set(hash, [...(this.routes.get(hash) ?? []), route]);
      this.routeCount++;
    }
    return { key, agent: route.agent, server: route.server };
  }
}
