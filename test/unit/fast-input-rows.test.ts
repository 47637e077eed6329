/**
 * The plan's fast path for inputs lines remembers routes by the bytes of the routing members: each
 * line gets the route its own members give (`routeInputRow` on the parsed row), whether it is seen
 * first or again, with members in any order, absent or spelled differently; an unroutable line
 * takes the full path (null) every time, and is never remembered as routable.
 */
import { describe, expect, it } from 'vitest';
import type { RoutingTable } from '../../src/config/routing.js';
import { FastInputRows } from '../../src/planning/fast-rows.js';
import { routeInputRow } from '../../src/planning/input-route.js';
import { Names } from '../../src/planning/names.js';

const routing: RoutingTable = {
  agents: { agent_a: 'rs_a', agent_b: 'rs_b' },
  catchAll: null,
  servers: { rs_a: 'http://a', rs_b: 'http://b' },
  taskSources: ['rs_a', 'rs_b'],
  environmentServers: { env_b: 'rs_b' },
};

const LINES = [
  '{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}',
  '{"_ng_task_index":0,"_ng_rollout_index":1,"agent_ref":{"name":"agent_b"}}',
  '{"agent_ref":{"name":"agent_a"},"_ng_task_index":1,"_ng_rollout_index":0,"_ng_environment_server":"env_b"}',
  '{"_ng_task_index":1,"_ng_rollout_index":1,"agent_ref": {"name":"agent_b"}}',
  '{"_ng_task_index":2,"_ng_rollout_index":0,"agent_ref":{"name":"agent_c"}}',
  '{"_ng_task_index":2,"_ng_rollout_index":1,"task_source":"rs_a","_ng_environment_server":"env_b"}',
  '{"_ng_task_index":3,"_ng_rollout_index":0,"task_source":"rs_b","_ng_environment_server":"env_b"}',
  '{"_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"name":"agent_\\u0061"}}',
];

describe('FastInputRows', () => {
  it('routes every line as its own members say, first seen or again; the unroutable one to the full path, each time', () => {
    const agents = new Names();
    const servers = new Names();
    const fast = new FastInputRows(routing, agents, servers);
    for (let pass = 0; pass < 3; pass++) {
      for (const line of [...LINES, ...LINES.slice().reverse()]) {
        const b = Buffer.from(line);
        const got = fast.read(b, 0, b.length);
        let want: { agent: string; server: string } | null = null;
        try {
          want = routeInputRow(JSON.parse(line) as Record<string, unknown>, line, routing, 'x');
        } catch {
          want = null;
        }
        expect(got && { agent: agents.list[got.agent], server: servers.list[got.server] }, line).toEqual(want);
      }
    }
    expect(agents.list).toEqual(['agent_a', 'agent_b', 'env_b']);
  });
});
