/**
 * NeMo Gym YAML configs (spec §2.0): a mapping of server instance name -> block, where a server
 * block is `{<server_type>: {<implementation>: {host, port, ...}}}`. Several files are deep-merged in
 * order, later files winning, as Hydra merges `--config` files. Hydra interpolations (`${...}`) are
 * not resolved: a host or port written that way counts as absent (pass `--server NAME=URL`).
 */
import { readFile } from 'node:fs/promises';
import { isMap, LineCounter, parseDocument } from 'yaml';
import { ConfigError } from '../contract/errors.js';

/** The server types of a NeMo Gym config block (`environment_servers` is newer NeMo Gym). */
export const SERVER_TYPES = ['resources_servers', 'responses_api_agents', 'responses_api_models', 'environment_servers'] as const;

/** One of `SERVER_TYPES`. */
export type ServerType = (typeof SERVER_TYPES)[number];

/** A merged NeMo Gym config. */
export interface GymConfig {
  /** The merged mapping: top-level key (server instance name or reserved key) -> value. */
  data: Record<string, unknown>;
  /** Top-level key -> `file:line` of the file that defined it last (for messages). */
  origins: Record<string, string>;
}

/** True for a plain mapping (what YAML mappings become), false for lists, scalars and null. */
export function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge with Hydra/OmegaConf semantics: mappings merge key by key, anything else replaces. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    out[k] = isMapping(prev) && isMapping(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

async function readConfigText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new ConfigError(`config file not found: ${path} (check the --config path)`);
    if (e.code === 'EISDIR') throw new ConfigError(`--config '${path}' is a directory: pass a NeMo Gym YAML config file`);
    throw new ConfigError(`cannot read config file ${path}: ${e.message}`);
  }
}

/** Parses one YAML config file into its mapping and the line of each top-level key. */
async function loadOne(path: string): Promise<{ data: Record<string, unknown>; lines: Record<string, number> }> {
  const text = await readConfigText(path);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, merge: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const line = err.linePos?.[0].line ?? lineCounter.linePos(err.pos[0]).line;
    const reason = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`${path}:${line}: invalid YAML: ${reason}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 10000 });
  } catch (err) {
    throw new ConfigError(`${path}: invalid YAML: ${(err as Error).message}`);
  }
  if (data === null || data === undefined) return { data: {}, lines: {} };
  if (!isMapping(data)) {
    throw new ConfigError(`${path}:1: a NeMo Gym config must be a mapping of server instance names to blocks, got ${typeOf(data)}`);
  }
  const lines: Record<string, number> = {};
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      const key = pair.key as { value?: unknown; range?: [number, number, number] } | null;
      if (key?.range) lines[String(key.value)] = lineCounter.linePos(key.range[0]).line;
    }
  }
  return { data, lines };
}

/**
 * Reads NeMo Gym YAML config files and deep-merges them in order (later files win). A missing
 * file, a YAML error (reported as `file:line`) or a top level that is not a mapping is a
 * `ConfigError`. No file gives an empty config.
 */
export async function loadGymConfigs(paths: string[]): Promise<GymConfig> {
  let data: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const path of paths) {
    const one = await loadOne(path);
    data = deepMerge(data, one.data);
    for (const key of Object.keys(one.data)) origins[key] = `${path}:${one.lines[key] ?? 1}`;
  }
  return { data, origins };
}

/** True if top-level `name` is a mapping holding a mapping under `serverType` (reserved keys never are). */
export function hasServerType(config: GymConfig, name: string, serverType: ServerType): boolean {
  const block = Object.hasOwn(config.data, name) ? config.data[name] : undefined;
  return isMapping(block) && isMapping(block[serverType]);
}

/** Top-level names of the blocks of one server type, in config order. */
export function blocksOfType(config: GymConfig, serverType: ServerType): string[] {
  return Object.keys(config.data).filter((name) => hasServerType(config, name, serverType));
}

/**
 * The first implementation of a server block: the first mapping under its first server type
 * (spec §2.0), or `null` if `name` is not a server block.
 */
export function firstImplementation(config: GymConfig, name: string): Record<string, unknown> | null {
  const block = Object.hasOwn(config.data, name) ? config.data[name] : undefined;
  if (!isMapping(block)) return null;
  const typeKey = Object.keys(block).find((k) => (SERVER_TYPES as readonly string[]).includes(k) && isMapping(block[k]));
  if (typeKey === undefined) return null;
  const impl = Object.values(block[typeKey] as Record<string, unknown>)[0];
  return isMapping(impl) ? impl : null;
}

/** `host` as usable in a URL: wildcard binds become loopback, IPv6 literals get brackets. */
export function connectHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  if (host.includes(':') && !host.startsWith('[')) return `[${host}]`;
  return host;
}

/** A TCP port from a config value (integer or digit string in 1..65535), else `null`. */
function portOf(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : null;
}

/**
 * `http://host:port` of a server instance from its first implementation's `host`/`port`
 * (spec §2.0); host `0.0.0.0` is reached as `127.0.0.1`; a `user:password@` before the host stays in
 * the URL (build-spec.ts takes it out). `null` when the block is not a server, or
 * host/port are missing, invalid or unresolved interpolations.
 */
export function serverUrl(config: GymConfig, instanceName: string): string | null {
  const impl = firstImplementation(config, instanceName);
  if (impl === null) return null;
  const host = impl.host;
  const port = portOf(impl.port);
  if (typeof host !== 'string' || host.trim() === '' || host.includes('${') || port === null) return null;
  // `user:password@host` (NeMo Gym's HTTP client takes userinfo from the URL it builds) keeps its userinfo.
  const at = host.lastIndexOf('@');
  const userinfo = at < 0 ? '' : host.slice(0, at + 1).trim();
  return `http://${userinfo}${connectHost(host.slice(at + 1).trim())}:${port}`;
}
