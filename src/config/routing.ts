/**
 * Which resources server verifies a row (spec §4.2, §5.4): newer NeMo Gym's resolver, a superset of
 * the snapshot's agent table. The table is plain JSON so it can travel in the workflow's run spec.
 */
import { ConfigError } from '../contract/errors.js';
import type { RoutingTable } from '../contract/routing-table.js';
import { multipleResourcesServers, noResourcesServer, noServerUrl, pythonRepr } from '../contract/messages.js';
import { compareCodePoints } from '../contract/row-key.js';
import { redactUserinfo } from '../contract/secrets.js';
import { blocksOfType, connectHost, firstImplementation, isMapping, serverUrl, type GymConfig } from './gym-config.js';

export type { RoutingTable };

/**
 * Snapshot §4.2 step 1 (§6 checks 10–13): for every top-level block with `responses_api_agents`,
 * its FIRST implementation's `resources_server.name`, if set, is that agent's server.
 */
export function agentTableFromConfig(config: GymConfig): Record<string, string> {
  const table: Record<string, string> = {};
  for (const agent of blocksOfType(config, 'responses_api_agents')) {
    const impl = firstImplementation(config, agent);
    const ref = impl?.resources_server;
    const rs = isMapping(ref) ? ref.name : undefined;
    if (typeof rs === 'string' && rs !== '') table[agent] = rs;
  }
  return table;
}

/**
 * NeMo Gym 0.7.0: for every top-level block with `environment_servers`, the first of its
 * implementations that has a `resources_server.name` names that environment server's resources server.
 */
export function environmentTableFromConfig(config: GymConfig): Record<string, string> {
  const table: Record<string, string> = {};
  for (const env of blocksOfType(config, 'environment_servers')) {
    const impls = Object.values((config.data[env] as Record<string, Record<string, unknown>>).environment_servers);
    for (const impl of impls) {
      const ref = isMapping(impl) ? impl.resources_server : undefined;
      const rs = isMapping(ref) ? ref.name : undefined;
      if (typeof rs === 'string' && rs !== '') {
        table[env] = rs;
        break;
      }
    }
  }
  return table;
}

function unique(names: Iterable<string>): string[] {
  return [...new Set(names)];
}

/**
 * The routing table of a merged NeMo Gym config (§4.2): agent blocks if any name a resources
 * server; else the single resources server as catch-all; none -> "no resources server found";
 * several -> "multiple resources servers". Every resources server the table can route to (agent
 * targets, the catch-all, every resources-server block) needs a URL: from `overrides`
 * (`--server NAME=URL`, which win) or its block's host/port; otherwise a `ConfigError` lists
 * the servers without one. An override naming no known resources server is a `ConfigError` too.
 */
export function routingFromGymConfig(config: GymConfig, overrides: Record<string, string>): RoutingTable {
  const agents = agentTableFromConfig(config);
  const environmentServers = environmentTableFromConfig(config);
  const rsBlocks = blocksOfType(config, 'resources_servers');
  let catchAll: string | null = null;
  if (Object.keys(agents).length === 0) {
    if (rsBlocks.length === 0) throw new ConfigError(noResourcesServer());
    if (rsBlocks.length > 1) throw new ConfigError(multipleResourcesServers(rsBlocks));
    catchAll = rsBlocks[0];
  }
  const needed = unique([
    ...Object.values(agents),
    ...(catchAll === null ? [] : [catchAll]),
    ...rsBlocks,
    ...Object.values(environmentServers),
  ]);
  for (const [name, url] of Object.entries(overrides)) {
    if (!needed.includes(name)) {
      throw new ConfigError(
        `--server ${name}=${redactUserinfo(url)}: the config has no resources server named ${pythonRepr(name)}; ` +
          `known: ${pythonRepr([...needed].sort(compareCodePoints))}`,
      );
    }
  }
  const servers: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of needed) {
    const url = Object.hasOwn(overrides, name) ? overrides[name] : serverUrl(config, name);
    if (url === null) missing.push(name);
    else servers[name] = url;
  }
  if (missing.length > 0) throw new ConfigError(noServerUrl(missing));
  return { agents, catchAll, servers, taskSources: rsBlocks, environmentServers };
}

/**
 * Routing without a config, from `--server NAME=URL` flags only: exactly one server is the
 * catch-all for every agent; none or several is a `ConfigError` (the spec's message plus what to pass).
 */
export function routingFromServerFlags(flags: Record<string, string>): RoutingTable {
  const names = Object.keys(flags);
  if (names.length === 0) {
    throw new ConfigError(`${noResourcesServer()} Pass --server NAME=URL, or --config with a NeMo Gym config.`);
  }
  if (names.length > 1) {
    throw new ConfigError(
      `${multipleResourcesServers(names)} Pass --config with the NeMo Gym config whose agent blocks name these ` +
        'servers (the --server flags then give their URLs).',
    );
  }
  return { agents: {}, catchAll: names[0], servers: { ...flags }, taskSources: [...names], environmentServers: {} };
}

const NAME = /^[^\s=]+$/;

/**
 * Parses one `--server NAME=URL` flag into `[name, baseUrl]`: the URL must be `http(s)://[user:password@]host[:port][/path]`
 * (no query or fragment); a trailing slash is dropped and host `0.0.0.0` becomes `127.0.0.1`.
 * A bad shape or URL is a `ConfigError` that shows the expected form (never the password).
 */
export function parseServerFlag(flag: string): [name: string, url: string] {
  const eq = flag.indexOf('=');
  // Messages show the flag without the URL's user and password.
  const s = eq < 0 ? flag : flag.slice(0, eq + 1) + redactUserinfo(flag.slice(eq + 1));
  const example = 'e.g. --server my_resources_server=http://127.0.0.1:8000';
  if (eq <= 0 || eq === flag.length - 1) throw new ConfigError(`--server ${s}: expected NAME=URL, ${example}`);
  const name = flag.slice(0, eq).trim();
  const raw = flag.slice(eq + 1).trim();
  if (!NAME.test(name)) throw new ConfigError(`--server ${s}: the server name must not contain spaces or '=', ${example}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`--server ${s}: ${pythonRepr(redactUserinfo(raw))} is not a URL; expected http://HOST:PORT, ${example}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ConfigError(`--server ${s}: the URL must start with http:// or https:// and name a host, ${example}`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(`--server ${s}: the URL must not have a query or fragment, ${example}`);
  }
  const host = url.port === '' ? connectHost(url.hostname) : `${connectHost(url.hostname)}:${url.port}`;
  const path = url.pathname.replace(/\/+$/, '');
  // The userinfo stays (percent-encoded) until the CLI takes it out of the routing table (build-spec.ts).
  const userinfo = url.username === '' && url.password === '' ? '' : `${url.username}${url.password === '' ? '' : `:${url.password}`}@`;
  return [name, `${url.protocol}//${userinfo}${host}${path}`];
}

/** Parses every `--server` flag; a name given twice is a `ConfigError`. */
export function parseServerFlags(list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of list) {
    const [name, url] = parseServerFlag(s);
    if (Object.hasOwn(out, name)) throw new ConfigError(`--server ${name} is given twice; pass each server once`);
    out[name] = url;
  }
  return out;
}

/**
 * The resources servers the reverify-mode guard checks (§4.3, §6 checks 20–25): the distinct agent
 * targets, sorted; with no concrete entries, the catch-all (an empty key set must not skip the
 * check); none at all -> `[]`.
 */
export function guardServerNames(t: RoutingTable): string[] {
  const names = unique(Object.values(t.agents)).sort(compareCodePoints);
  if (names.length === 0 && t.catchAll !== null) return [t.catchAll];
  return names;
}
