/**
 * The run config as NeMo Gym's exporters log it when they open (`export_config`): secrets masked,
 * the whole config as the `global_config.json` artifact (`json.dump(indent=2)`), and every leaf as
 * a flat param (`a.b`, `list[0]`; value as Python's `str`, cut to MLflow's 6000 characters).
 */
import { MAX_PARAM_VAL_LENGTH, mlflowKey } from './metric-names.js';

/** The artifact NeMo Gym's MLflow exporter writes the config to. */
export const CONFIG_ARTIFACT = 'global_config.json';

function* flatten(value: unknown, prefix: string): Generator<[string, unknown]> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* flatten(value[i], `${prefix}[${i}]`);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) yield* flatten(v, prefix ? `${prefix}.${k}` : k);
  } else if (prefix) yield [prefix, value];
}

/** A leaf as Python's `str()` shows it. */
function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
}

/** The params of a (masked) config: sanitised names, values as text. */
export function configParams(config: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [key, value] of flatten(config, '')) {
    const name = mlflowKey(key);
    if (name !== null) out.push([name, [...pyStr(value)].slice(0, MAX_PARAM_VAL_LENGTH).join('')]);
  }
  return out;
}

/** The `global_config.json` text: indented by 2, non-ASCII escaped, as Python's `json.dump` writes it. */
export function configArtifactText(config: Record<string, unknown>): string {
  return JSON.stringify(config, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
