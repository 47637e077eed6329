/**
 * Whether a resources server exposes its tools over MCP (`expose_tools_over_mcp` in its single
 * `resources_servers` implementation block, NeMo Gym 0.7.0): ATIF rows with function calls cannot be
 * re-verified against such a server, since ATIF does not carry Gym's canonical (server, tool) names.
 * Read once by the CLI (the config stays out of the workflow); a problem with the block is kept as
 * its message, for the preflight to raise only if a row with function calls is routed there.
 */
import { pyStrRepr } from '../contract/python-repr.js';
import { isMapping, type GymConfig } from './gym-config.js';

/** `true`/`false`, or the message of the `ConfigError` reading the flag raises. */
export type McpExposure = boolean | string;

const TRUE_TEXTS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_TEXTS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** pydantic's lax bool: bools, 0/1, and the usual words in any case; anything else is invalid (null). */
function laxBool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  if (typeof v === 'string') {
    const t = v.toLowerCase();
    if (TRUE_TEXTS.has(t)) return true;
    if (FALSE_TEXTS.has(t)) return false;
  }
  return null;
}

/** The MCP exposure of resources server `name` in `config` (null: no config was given, only `--server`). */
export function mcpExposure(config: GymConfig | null, name: string): McpExposure {
  const quoted = pyStrRepr(name);
  const block = config !== null && Object.hasOwn(config.data, name) ? config.data[name] : undefined;
  if (!isMapping(block)) return `reverify: resources server ${quoted} is missing from the config.`;
  const impls = block.resources_servers;
  if (!isMapping(impls) || Object.keys(impls).length !== 1) {
    return `reverify: resources server ${quoted} must contain exactly one resources_servers entry.`;
  }
  const impl = Object.values(impls)[0];
  if (!isMapping(impl)) return `reverify: resources server ${quoted} has an invalid config entry.`;
  const value = Object.hasOwn(impl, 'expose_tools_over_mcp') ? impl.expose_tools_over_mcp : false;
  return laxBool(value) ?? `reverify: resources server ${quoted} has an invalid expose_tools_over_mcp value.`;
}
