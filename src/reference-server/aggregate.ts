import { FieldDescriber } from './describe-stats.js';
import { repeatLevelMetrics } from './repeat-level.js';

/**
 * NeMo Gym's default `/aggregate_metrics` (spec §3.1–§3.7), without a `compute_metrics` hook, and
 * the `repeat_level_metrics` NeMo Gym 0.7.0 adds (repeat-level.ts).
 * Pure: no I/O. Rows are reduced to what the aggregation reads as they are added, so a caller
 * can stream a large request through `MetricsAggregator.add` without keeping the rows.
 */

/** A task or rollout index as found in a row (absent or null reads as 0). */
export type RolloutIndex = number | string;

/** One entry of `group_level_metrics` (spec §3.5); the stats keys sit between the fixed ones. */
export type GroupLevelMetrics = { _ng_task_index: RolloutIndex } & Record<string, unknown>;

/** The body of a 200 `/aggregate_metrics` answer (spec §2.3; `repeat_level_metrics` as NeMo Gym 0.7.0), in this key order. */
export interface AggregateMetrics {
  group_level_metrics: GroupLevelMetrics[];
  agent_metrics: Record<string, number>;
  key_metrics: Record<string, number>;
  repeat_level_metrics: Array<Record<string, unknown>>;
}

/** An aggregation failure; the server answers HTTP 500 with the Python exception repr. */
export class AggregationError extends Error {
  /** @param pythonType the Python exception class the real server raises in this case */
  constructor(
    readonly pythonType: string,
    message: string,
  ) {
    super(message);
    this.name = 'AggregationError';
  }
}

/** A row reduced to its key, its numeric fields and its `rollout_infos` entry. */
interface Entry {
  task: RolloutIndex;
  rollout: RolloutIndex;
  /** Alternating column id and value of the numeric fields, in the row's merged-record order. */
  fields: number[];
  rolloutInfo: Record<string, unknown>;
}

const TASK = '_ng_task_index';
const ROLLOUT = '_ng_rollout_index';
const SAMPLE_AGENT_REF = { name: 'agent' };
const INFO_SKIPPED_KEYS = new Set([TASK, ROLLOUT, 'reward', 'response']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python truthiness of a JSON value. */
function isTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

/** bool -> 0/1, number -> itself, anything else -> undefined (not a numeric field). */
function numericValue(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return typeof value === 'number' ? value : undefined;
}

/** The key as Python prints the tuple, e.g. `(0, 1)` or `('a', 1)`. */
function keyRepr(task: RolloutIndex, rollout: RolloutIndex): string {
  const repr = (value: RolloutIndex): string => (typeof value === 'string' ? `'${value}'` : String(value));
  return `(${repr(task)}, ${repr(rollout)})`;
}

function readIndex(row: Record<string, unknown>, key: string): RolloutIndex {
  const value = row[key] ?? 0;
  if (typeof value === 'number' || typeof value === 'string') return value;
  throw new AggregationError('TypeError', `${key} must be a number or a string, got ${JSON.stringify(value)}`);
}

/** Python ordering of two index values: numbers or strings, never mixed. */
function compareIndex(a: RolloutIndex, b: RolloutIndex): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a !== typeof b) {
    throw new AggregationError('TypeError', "'<' not supported between instances of 'str' and 'int'");
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareEntries(a: Entry, b: Entry): number {
  return compareIndex(a.task, b.task) || compareIndex(a.rollout, b.rollout);
}

/**
 * Incremental default aggregation: `add` every verify response, then call `result` once.
 * Throws `AggregationError` on a duplicate (task, rollout) key, a non-object `response` or usage,
 * or indices that are neither numbers nor strings.
 */
export class MetricsAggregator {
  private readonly entries: Entry[] = [];
  private readonly columnIds = new Map<string, number>();
  private readonly columnNames: string[] = [];
  /** A bad `response` fails the request, but duplicate keys are reported first (as in NeMo Gym). */
  private badResponse: AggregationError | undefined;

  /** Normalises one verify response (spec §3.1, §3.2) and keeps only what the stats need. */
  add(verifyResponse: Record<string, unknown>): void {
    const task = readIndex(verifyResponse, TASK);
    const rollout = readIndex(verifyResponse, ROLLOUT);
    const response = 'response' in verifyResponse ? verifyResponse.response : {};
    const usage = isRecord(response) ? response.usage : undefined;
    if (!isRecord(response) || (isTruthy(usage) && !isRecord(usage))) {
      this.badResponse ??= new AggregationError(
        'AttributeError',
        `response of rollout key ${keyRepr(task, rollout)} must be an object with an object usage`,
      );
    }
    const usageFields = isRecord(usage) ? usage : {};
    this.entries.push({
      task,
      rollout,
      fields: this.numericFields(verifyResponse, usageFields),
      rolloutInfo: rolloutInfo(task, rollout, verifyResponse, usageFields),
    });
  }

  /** The aggregate of everything added (spec §3.4–§3.6, and the repeat-level metrics); empty request -> all empty. */
  result(): AggregateMetrics {
    const entries = this.entries.sort(compareEntries);
    for (let i = 1; i < entries.length; i++) {
      if (compareEntries(entries[i - 1], entries[i]) === 0) {
        const key = keyRepr(entries[i].task, entries[i].rollout);
        throw new AggregationError('ValueError', `Duplicate materialized input row for rollout key ${key}`);
      }
    }
    if (this.badResponse) throw this.badResponse;
    if (entries.length === 0) return { group_level_metrics: [], agent_metrics: {}, key_metrics: {}, repeat_level_metrics: [] };

    const table = new ColumnTable(entries, this.columnNames);
    const groups: GroupLevelMetrics[] = [];
    for (let start = 0; start < entries.length;) {
      let end = start + 1;
      while (end < entries.length && compareIndex(entries[end].task, entries[start].task) === 0) end++;
      groups.push({
        _ng_task_index: entries[start].task,
        ...table.describe(start, end),
        sample: { agent_ref: { ...SAMPLE_AGENT_REF } },
        num_rollouts: end - start,
        expected_num_rollouts: end - start,
        missing_num_rollouts: 0,
        reward_profile_completion_pct: 100.0,
        rollout_infos: entries.slice(start, end).map((entry) => entry.rolloutInfo),
      });
      start = end;
    }
    const agentMetrics = table.describe(0, entries.length);
    const keyMetrics = Object.fromEntries(Object.entries(agentMetrics).filter(([k]) => k.startsWith('mean/')));
    return {
      group_level_metrics: groups,
      agent_metrics: agentMetrics,
      key_metrics: keyMetrics,
      repeat_level_metrics: repeatLevelMetrics(entries, this.columnNames, compareIndex),
    };
  }

  /** Numeric fields of `row | usage` (usage wins on a clash, keeps the row's key position). */
  private numericFields(row: Record<string, unknown>, usage: Record<string, unknown>): number[] {
    const fields: number[] = [];
    for (const name in row) {
      const number = numericValue(Object.hasOwn(usage, name) ? usage[name] : row[name]);
      if (number !== undefined && name !== TASK && name !== ROLLOUT) fields.push(this.columnId(name), number);
    }
    for (const name in usage) {
      const number = numericValue(usage[name]);
      if (number !== undefined && !Object.hasOwn(row, name)) fields.push(this.columnId(name), number);
    }
    return fields;
  }

  private columnId(name: string): number {
    let id = this.columnIds.get(name);
    if (id === undefined) {
      id = this.columnNames.push(name) - 1;
      this.columnIds.set(name, id);
    }
    return id;
  }
}

/** The `rollout_infos` entry of a row: id, indices, raw reward, numeric usage, other numeric fields. */
function rolloutInfo(
  task: RolloutIndex,
  rollout: RolloutIndex,
  row: Record<string, unknown>,
  usage: Record<string, unknown>,
): Record<string, unknown> {
  const info: Record<string, unknown> = { rollout_id: `${task}:${rollout}`, [TASK]: task, [ROLLOUT]: rollout };
  if ('reward' in row) info.reward = row.reward;
  for (const name in usage) {
    const number = numericValue(usage[name]);
    if (number !== undefined) info[name] = number;
  }
  for (const name in row) {
    const number = numericValue(row[name]);
    if (number !== undefined && !INFO_SKIPPED_KEYS.has(name)) info[name] = number;
  }
  return info;
}

/**
 * The numeric columns of the sorted rows, ordered by first appearance in that order (as pandas
 * orders the columns of `DataFrame.from_records`), ready to be described per row range.
 */
class ColumnTable {
  private readonly width: number;
  /** Column id -> position in the ordered columns. */
  private readonly positions: Int32Array;
  private readonly describer: FieldDescriber;

  constructor(
    private readonly entries: readonly Entry[],
    columnNames: readonly string[],
  ) {
    this.positions = new Int32Array(columnNames.length).fill(-1);
    const names: string[] = [];
    for (const entry of entries) {
      for (let i = 0; i < entry.fields.length; i += 2) {
        const id = entry.fields[i];
        if (this.positions[id] === -1) this.positions[id] = names.push(columnNames[id]) - 1;
      }
    }
    this.width = names.length;
    this.describer = new FieldDescriber(names);
  }

  /** The stats object of the rows `[start, end)`. */
  describe(start: number, end: number): Record<string, number> {
    const n = end - start;
    const cells = new Float64Array(this.width * n).fill(NaN);
    for (let row = 0; row < n; row++) {
      const fields = this.entries[start + row].fields;
      for (let i = 0; i < fields.length; i += 2) cells[this.positions[fields[i]] * n + row] = fields[i + 1];
    }
    const columns = Array.from({ length: this.width }, (_, c) => cells.subarray(c * n, (c + 1) * n));
    return this.describer.describe(columns);
  }
}

/** The default aggregation of a whole `verify_responses` list (spec §3). */
export function aggregateMetrics(verifyResponses: Iterable<Record<string, unknown>>): AggregateMetrics {
  const aggregator = new MetricsAggregator();
  for (const verifyResponse of verifyResponses) aggregator.add(verifyResponse);
  return aggregator.result();
}
