/**
 * The metrics NeMo Gym 0.7.0 exports after aggregation (spec §3.9) and MLflow's name rules, as its
 * MLflow exporter applies them: `@` spelled `_at_`, characters outside `[/\w.\- :]` → `_`, empty,
 * `.` and `..` path segments neutralised, names over 250 characters elided in the middle with `___`.
 */
import { isMapping } from '../config/gym-config.js';

/** MLflow's longest metric, param or tag name. */
export const MAX_ENTITY_KEY_LENGTH = 250;
/** MLflow's longest param value (NeMo Gym cuts string metrics, as tags, to this too). */
export const MAX_PARAM_VAL_LENGTH = 6000;
const ELISION_MARKER = '___';

function normalizeKeyPath(key: string): string {
  const segments = key
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (/^\.+$/.test(s) ? '_'.repeat(s.length) : s));
  return segments.join('/').replace(/^\.+/, (dots) => '_'.repeat(dots.length));
}

function elideKey(key: string, limit = MAX_ENTITY_KEY_LENGTH): string {
  const chars = [...key];
  if (chars.length <= limit) return key;
  const kept = limit - ELISION_MARKER.length;
  const tail = Math.floor(kept / 2);
  const head = kept - tail;
  return chars.slice(0, head).join('') + ELISION_MARKER + (tail ? chars.slice(-tail).join('') : '');
}

/** The MLflow name of a metric, param or tag; null when nothing is left of it (NeMo Gym drops the entry). */
export function mlflowKey(key: string): string | null {
  // Python's \w is Unicode-aware: letters, digits (any script), underscore.
  const replaced = key.replaceAll('@', '_at_').replace(/[^/\p{L}\p{N}_.\- :]/gu, '_');
  const sanitized = normalizeKeyPath(elideKey(normalizeKeyPath(replaced)));
  return sanitized === '' ? null : sanitized;
}

/** A metric value as NeMo Gym passes it on: bool, number, string or null (others are not exported). */
export type MetricValue = boolean | number | string | null;

function primitive(v: unknown): v is MetricValue {
  return v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string';
}

/** Where an exported metric's value is: `entries[entry][field][key]`, and the name it is exported under. */
export interface MetricPick {
  name: string;
  entry: number;
  field: 'agent_metrics' | 'key_metrics';
  key: string;
}

/**
 * The flat metrics dict NeMo Gym exports from the aggregate metrics file's entries (in file order):
 * `<agent>/<key>` for each primitive `agent_metrics` value, `key_metrics/<agent>/<key>` likewise.
 */
export function exportedMetricPicks(entries: unknown[]): MetricPick[] {
  const out: MetricPick[] = [];
  entries.forEach((entry, i) => {
    if (!isMapping(entry) || !isMapping(entry.agent_ref)) return;
    const agent = String(entry.agent_ref.name);
    for (const [field, prefix] of [
      ['agent_metrics', `${agent}/`],
      ['key_metrics', `key_metrics/${agent}/`],
    ] as const) {
      const metrics = entry[field];
      if (!isMapping(metrics)) continue;
      for (const [k, v] of Object.entries(metrics)) if (primitive(v)) out.push({ name: prefix + k, entry: i, field, key: k });
    }
  });
  return out;
}

/** The exported metrics with their values (a later name replaces an earlier one, as in a dict). */
export function exportedMetrics(entries: unknown[]): Map<string, MetricValue> {
  const out = new Map<string, MetricValue>();
  for (const p of exportedMetricPicks(entries))
    out.set(p.name, (entries[p.entry] as Record<string, Record<string, MetricValue>>)[p.field][p.key]);
  return out;
}

/** The coverage metrics NeMo Gym exports at the end of a reverify run. */
export function coverageMetrics(scored: number, missing: number): Map<string, MetricValue> {
  return new Map<string, MetricValue>([
    ['coverage/expected', scored + missing],
    ['coverage/scored', scored],
    ['coverage/missing', missing],
  ]);
}

/** MLflow's shape of a metrics dict: numbers (bools as 1/0) as metrics, strings as tags (cut), null dropped. */
export function mlflowEntries(metrics: Map<string, MetricValue>): { metrics: Array<[string, number]>; tags: Array<[string, string]> } {
  const numeric: Array<[string, number]> = [];
  const tags: Array<[string, string]> = [];
  for (const [key, value] of metrics) {
    const name = mlflowKey(key);
    if (name === null || value === null) continue;
    if (typeof value === 'string') tags.push([name, [...value].slice(0, MAX_PARAM_VAL_LENGTH).join('')]);
    else numeric.push([name, Number(value)]);
  }
  return { metrics: numeric, tags };
}
