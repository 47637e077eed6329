import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { loadGymConfigs, type GymConfig } from '../../src/config/gym-config.js';
import {
  agentTableFromConfig,
  environmentTableFromConfig,
  guardServerNames,
  parseServerFlag,
  parseServerFlags,
  routingFromGymConfig,
  routingFromServerFlags,
  type RoutingTable,
} from '../../src/config/routing.js';
import { resolveServer } from '../../src/config/resolve-server.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/configs/${name}`, import.meta.url));
const load = (...names: string[]) => loadGymConfigs(names.map(fixture));
const cfg = (data: Record<string, unknown>): GymConfig => ({ data, origins: {} });

function configError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const table = (t: Partial<RoutingTable>): RoutingTable => ({ agents: {}, catchAll: null, servers: {}, taskSources: [], ...t });

describe('routing table from agent blocks (§6.10–13)', () => {
  it('§6.10 one agent block naming text_to_sql_resources_server routes its agent there', async () => {
    expect(agentTableFromConfig(await load('text-to-sql.yaml'))).toEqual({
      text_to_sql_simple_agent: 'text_to_sql_resources_server',
    });
  });

  it('§6.11 two agent blocks with different RS: each agent maps to its own', async () => {
    expect(agentTableFromConfig(await load('agents-two.yaml'))).toEqual({ agent_a: 'rs_a', agent_b: 'rs_b' });
  });

  it('§6.12 an agent block whose resources_server has no name contributes nothing', async () => {
    expect(agentTableFromConfig(await load('agent-without-rs-name.yaml'))).toEqual({});
  });

  it('§6.13 only an RS block: the agent table is empty', async () => {
    expect(agentTableFromConfig(await load('resources-only.yaml'))).toEqual({});
  });

  it('only the FIRST implementation of an agent block counts', () => {
    const c = cfg({
      ag: { responses_api_agents: { first: { resources_server: { name: 'rs1' } }, second: { resources_server: { name: 'rs2' } } } },
    });
    expect(agentTableFromConfig(c)).toEqual({ ag: 'rs1' });
  });
});

describe('resources-only routing (§6.14–16)', () => {
  it('§6.14 resources-only: any agent routes to the single RS', async () => {
    const t = routingFromGymConfig(await load('resources-only.yaml'), {});
    expect(t.catchAll).toBe('verifier_block');
    for (const name of ['mcqa_simple_agent', 'typo_agent', '', 'ünïcode agent']) {
      expect(resolveServer(t, { agent: name })).toBe('verifier_block');
    }
    expect(resolveServer(t, {})).toBe('verifier_block');
  });

  it('§6.15 two RS blocks and no agents: "multiple resources servers"', async () => {
    const c = await load('two-resources-servers.yaml');
    expect(configError(() => routingFromGymConfig(c, {}))).toBe(
      "reverify: multiple resources servers ['rs_one', 'rs_two'] and no agent blocks to route by. Use a config with agent blocks.",
    );
  });

  it('§6.16 no RS block: "no resources server found"', async () => {
    const c = await load('no-resources-server.yaml');
    expect(configError(() => routingFromGymConfig(c, {}))).toBe('reverify: no resources server found in the config.');
  });
});

describe('combined table (§6.17–19)', () => {
  it('§6.17 an agent config routes by agent blocks', async () => {
    const t = routingFromGymConfig(await load('agents-two.yaml'), {});
    expect(t).toEqual({
      agents: { agent_a: 'rs_a', agent_b: 'rs_b' },
      catchAll: null,
      servers: { rs_a: 'http://127.0.0.1:8001', rs_b: 'http://127.0.0.1:8002' },
      taskSources: ['rs_a', 'rs_b'],
      environmentServers: {},
    });
    expect(resolveServer(t, { agent: 'agent_a' })).toBe('rs_a');
    expect(resolveServer(t, { agent: 'agent_b' })).toBe('rs_b');
  });

  it('§6.18 a resources-only config routes any agent name to the single RS', async () => {
    const t = routingFromGymConfig(await load('resources-only.yaml'), {});
    expect(t.servers).toEqual({ verifier_block: 'http://127.0.0.1:8001' });
    expect(resolveServer(t, { agent: 'anything' })).toBe('verifier_block');
  });

  it('§6.19 an agent block without RS name plus one RS block verifier_block: any agent routes there', async () => {
    const t = routingFromGymConfig(await load('agent-without-rs-name.yaml'), {});
    expect(t.agents).toEqual({});
    expect(resolveServer(t, { agent: 'nameless_agent' })).toBe('verifier_block');
    expect(resolveServer(t, { agent: 'other' })).toBe('verifier_block');
  });
});

describe('unique RS names for the guard (§6.20–25)', () => {
  it('§6.20 {a→rs_a, b→rs_b}: names {rs_a, rs_b}', () => {
    expect(guardServerNames(table({ agents: { a: 'rs_a', b: 'rs_b' } }))).toEqual(['rs_a', 'rs_b']);
  });

  it('§6.21 two agents sharing one RS: that RS once', () => {
    expect(guardServerNames(table({ agents: { a: 'rs', b: 'rs' } }))).toEqual(['rs']);
  });

  it('§6.22 an empty table: no names', () => {
    expect(guardServerNames(table({}))).toEqual([]);
  });

  it('§6.23 a resources-only catch-all with no concrete keys: the single RS is still returned', async () => {
    expect(guardServerNames(table({ catchAll: 'only_rs' }))).toEqual(['only_rs']);
    expect(guardServerNames(routingFromGymConfig(await load('resources-only.yaml'), {}))).toEqual(['verifier_block']);
  });

  it('§6.24 a catch-all with concrete keys: only the concrete values (not the default)', () => {
    expect(guardServerNames(table({ agents: { a: 'rs_a' }, catchAll: 'fallback' }))).toEqual(['rs_a']);
  });

  it('§6.25 a catch-all without a default: no names', () => {
    expect(guardServerNames(table({ catchAll: null }))).toEqual([]);
  });

  it('§6.104 the guard covers every RS of the table, whichever rows exist', async () => {
    expect(guardServerNames(routingFromGymConfig(await load('agents-two.yaml'), {}))).toEqual(['rs_a', 'rs_b']);
  });
});

describe('resolveServer (newer resolver, §4.2, §5.4)', () => {
  const t = table({
    agents: { agent_a: 'rs_a', agent_b: 'rs_b' },
    servers: { rs_a: 'http://a', rs_b: 'http://b', rs_c: 'http://c' },
    taskSources: ['rs_a', 'rs_b', 'rs_c'],
  });

  it('§6.73 each agent goes to its own RS', () => {
    expect(resolveServer(t, { agent: 'agent_a' })).toBe('rs_a');
    expect(resolveServer(t, { agent: 'agent_b' })).toBe('rs_b');
  });

  it('a task_source naming an RS block wins over the agent', () => {
    expect(resolveServer(t, { agent: 'agent_a', taskSource: 'rs_c' })).toBe('rs_c');
  });

  it('a task_source that names no RS block falls back to the agent table', () => {
    expect(resolveServer(t, { agent: 'agent_b', taskSource: 'some_dataset' })).toBe('rs_b');
  });

  it('an unknown agent is a ConfigError with the newer text', () => {
    expect(configError(() => resolveServer(t, { agent: 'ghost', taskSource: 'some_dataset' }))).toBe(
      "reverify: cannot find a resources server for row (agent_ref.name='ghost', task_source='some_dataset'). Known agents: ['agent_a', 'agent_b'].",
    );
    expect(configError(() => resolveServer(t, { agent: 'constructor' }))).toContain("agent_ref.name='constructor'");
  });
});

describe('NeMo Gym 0.7.0 environment-server stamps (_ng_environment_server)', () => {
  it('an environment server block routes to the first of its implementations that names a resources server', async () => {
    const c = await load('environment-servers.yaml');
    expect(environmentTableFromConfig(c)).toEqual({ env_b: 'rs_b' });
    const t = routingFromGymConfig(c, {});
    expect(t.environmentServers).toEqual({ env_b: 'rs_b' });
    expect(t.agents).toEqual({ agent_a: 'rs_a' });
  });

  it('precedence: task_source naming an RS block, then the environment server, then the agent, then the catch-all', async () => {
    const t = routingFromGymConfig(await load('environment-servers.yaml'), {});
    expect(resolveServer(t, { agent: 'agent_a' })).toBe('rs_a');
    expect(resolveServer(t, { agent: 'agent_a', environmentServer: 'env_b' })).toBe('rs_b');
    expect(resolveServer(t, { environmentServer: 'env_b' })).toBe('rs_b');
    expect(resolveServer(t, { agent: 'agent_a', environmentServer: 'env_b', taskSource: 'rs_a' })).toBe('rs_a');
    expect(resolveServer(t, { agent: 'agent_a', environmentServer: 'env_b', taskSource: 'not_a_block' })).toBe('rs_b');
    // A stamp naming no environment server with a resources server (or nothing in the config) falls through to the agent.
    expect(resolveServer(t, { agent: 'agent_a', environmentServer: 'env_without_rs' })).toBe('rs_a');
    expect(resolveServer(t, { agent: 'agent_a', environmentServer: 'rs_b' })).toBe('rs_a');
    expect(configError(() => resolveServer(t, { environmentServer: 'ghost_env' }))).toBe(
      "reverify: cannot find a resources server for row (agent_ref.name=None, task_source=None). Known agents: ['agent_a'].",
    );
    const catchAll = table({ catchAll: 'rs_only', environmentServers: { env_b: 'rs_b' } });
    expect(resolveServer(catchAll, { agent: 'x', environmentServer: 'env_b' })).toBe('rs_b');
    expect(resolveServer(catchAll, { agent: 'x', environmentServer: 'env_other' })).toBe('rs_only');
  });

  it('the resources server an environment server names needs a URL like any other route', () => {
    const c = cfg({
      env_b: { environment_servers: { impl: { resources_server: { name: 'rs_b' } } } },
      agent_a: { responses_api_agents: { impl: { resources_server: { name: 'rs_a' } } } },
      rs_a: { resources_servers: { impl: { host: 'h', port: 1 } } },
    });
    expect(configError(() => routingFromGymConfig(c, {}))).toContain("'rs_b'");
    expect(routingFromGymConfig(c, { rs_b: 'http://127.0.0.1:2' }).servers).toEqual({ rs_a: 'http://h:1', rs_b: 'http://127.0.0.1:2' });
  });

  it('a routing table from a run started before environment servers were routed (no field) routes as before', () => {
    const old = { agents: { a: 'rs_a' }, catchAll: null, servers: {}, taskSources: ['rs_a'] } as RoutingTable;
    expect(resolveServer(old, { agent: 'a', environmentServer: 'env_b' })).toBe('rs_a');
  });
});

describe('routing URLs and --server overrides', () => {
  it('an RS without host/port needs --server', async () => {
    const c = await load('text-to-sql.yaml');
    expect(configError(() => routingFromGymConfig(c, {}))).toBe(
      "reverify: no URL for resources server(s) ['text_to_sql_resources_server']: add host and port to its implementation in the config, or pass --server text_to_sql_resources_server=http://HOST:PORT",
    );
    const t = routingFromGymConfig(c, { text_to_sql_resources_server: 'http://10.0.0.5:8000' });
    expect(t.servers).toEqual({ text_to_sql_resources_server: 'http://10.0.0.5:8000' });
  });

  it('--server wins over the config host/port', async () => {
    const t = routingFromGymConfig(await load('agents-two.yaml'), { rs_b: 'http://other:1' });
    expect(t.servers.rs_b).toBe('http://other:1');
    expect(t.servers.rs_a).toBe('http://127.0.0.1:8001');
  });

  it('--server naming no resources server of the config is a ConfigError', async () => {
    const c = await load('agents-two.yaml');
    expect(configError(() => routingFromGymConfig(c, { agent_a: 'http://x:1' }))).toBe(
      "--server agent_a=http://x:1: the config has no resources server named 'agent_a'; known: ['rs_a', 'rs_b']",
    );
  });
});

describe('routingFromServerFlags (no config)', () => {
  it('exactly one server is the catch-all', () => {
    const t = routingFromServerFlags({ my_rs: 'http://127.0.0.1:8000' });
    expect(t).toEqual({
      agents: {},
      catchAll: 'my_rs',
      servers: { my_rs: 'http://127.0.0.1:8000' },
      taskSources: ['my_rs'],
      environmentServers: {},
    });
    expect(resolveServer(t, { agent: 'any_agent' })).toBe('my_rs');
    expect(guardServerNames(t)).toEqual(['my_rs']);
  });

  it('several servers: the spec error plus a hint to pass --config', () => {
    const msg = configError(() => routingFromServerFlags({ a: 'http://a:1', b: 'http://b:2' }));
    expect(
      msg.startsWith("reverify: multiple resources servers ['a', 'b'] and no agent blocks to route by. Use a config with agent blocks."),
    ).toBe(true);
    expect(msg).toContain('Pass --config');
  });

  it('no server at all', () => {
    expect(configError(() => routingFromServerFlags({}))).toContain(
      'reverify: no resources server found in the config. Pass --server NAME=URL',
    );
  });
});

describe('parseServerFlag', () => {
  it('parses NAME=URL and normalizes the URL', () => {
    expect(parseServerFlag('my_rs=http://127.0.0.1:8000')).toEqual(['my_rs', 'http://127.0.0.1:8000']);
    expect(parseServerFlag('rs=http://0.0.0.0:8000/')).toEqual(['rs', 'http://127.0.0.1:8000']);
    expect(parseServerFlag('rs=https://judge.example.com/prefix/')).toEqual(['rs', 'https://judge.example.com/prefix']);
    expect(parseServerFlag('rs=http://[::1]:9000')).toEqual(['rs', 'http://[::1]:9000']);
    expect(parseServerFlag('rs=http://h:80')).toEqual(['rs', 'http://h']);
  });

  it.each([
    ['my_rs', 'expected NAME=URL'],
    ['=http://x:1', 'expected NAME=URL'],
    ['rs=', 'expected NAME=URL'],
    ['my rs=http://x:1', 'must not contain spaces'],
    ['rs=localhost:8000', 'must start with http:// or https://'],
    ['rs=127.0.0.1:8000', 'is not a URL'],
    ['rs=ftp://x', 'must start with http:// or https://'],
    ['rs=http://x:1/?a=b', 'must not have a query or fragment'],
  ])('rejects %j with the fix', (s, reason) => {
    const msg = configError(() => parseServerFlag(s));
    expect(msg).toContain(reason);
    expect(msg).toContain('e.g. --server my_resources_server=http://127.0.0.1:8000');
  });

  it('parseServerFlags refuses a name given twice', () => {
    expect(parseServerFlags(['a=http://x:1', 'b=http://y:2'])).toEqual({ a: 'http://x:1', b: 'http://y:2' });
    expect(configError(() => parseServerFlags(['a=http://x:1', 'a=http://y:2']))).toBe('--server a is given twice; pass each server once');
  });
});
