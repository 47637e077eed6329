/**
 * The materialized inputs of an ATIF run, read as NeMo Gym 0.7.0 reads them for ATIF: strict JSON,
 * and each row keyed by integer indices >= 0 with a non-blank `agent_ref.name` (its first such
 * problem is reported after the manifest's own errors, as 0.7.0 does). Each row goes to the key
 * join as one record: where it is, its agent and resources server (or why it has none: reported
 * only if a manifest entry selects it), and whether it has a `responses_create_params` object.
 */
import { ConfigError, InputError } from '../contract/errors.js';
import { keyId } from '../contract/row-key.js';
import { rowRouteOf } from '../contract/row-route.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';
import type { ExternalSorter } from '../io/external-sort.js';
import { resolveServer } from '../config/resolve-server.js';
import type { RoutingTable } from '../config/routing.js';
import { pyRepr } from '../atif/py-json.js';
import { isJsonInt, isJsonObject, parseStrictJson, StrictJsonError, type JsonObject } from '../atif/strict-json.js';
import { encode } from './key-facts.js';
import type { KeyedRecord } from './keyed-records.js';
import type { Names } from './names.js';

/** A problem found at a line of the inputs. */
export interface LineProblem {
  line: number;
  message: string;
}

function parseRow(path: string, lineNo: number, text: string): JsonObject {
  let row;
  try {
    row = parseStrictJson(text);
  } catch (err) {
    if (err instanceof StrictJsonError) throw new InputError(`invalid materialized input row ${lineNo} in ${path}: ${err.message}`);
    throw err;
  }
  if (!isJsonObject(row)) throw new InputError(`materialized input row ${lineNo} in ${path} is not an object`);
  return row;
}

/** Why a row cannot be keyed, in 0.7.0's words, or null. */
function keyProblem(row: JsonObject, where: string): string | null {
  for (const field of ['_ng_task_index', '_ng_rollout_index']) {
    const v = row[field] ?? null;
    if (!isJsonInt(v) || v < 0) return `${where} has invalid ${field}: ${pyRepr(v)}`;
    if (typeof v === 'bigint')
      return `${where} has ${field} ${v}, beyond the exact integer range of ±2^53, which reverify cannot key exactly`;
  }
  const ref = row.agent_ref;
  const name = isJsonObject(ref) ? (ref.name ?? null) : null;
  if (typeof name !== 'string' || name.trim() === '') return `${where} has invalid agent_ref.name: ${pyRepr(name)}`;
  return null;
}

/**
 * Streams the inputs into the join. Throws at once on a line that is not a JSON object; returns
 * the first row that cannot be keyed (the caller reports it after the manifest's errors).
 */
export async function addAtifInputs(
  path: string,
  routing: RoutingTable,
  join: ExternalSorter<KeyedRecord>,
  agents: Names,
  servers: Names,
): Promise<LineProblem | null> {
  let first: LineProblem | null = null;
  for await (const line of jsonlLines(path, 0, { digests: true })) {
    if (isBlank(line.text)) continue;
    if (!line.utf8) throw new InputError(`invalid materialized input row ${line.lineNo} in ${path}: the line is not valid UTF-8`);
    const row = parseRow(path, line.lineNo, line.text);
    const problem = keyProblem(row, `materialized input row ${line.lineNo} in ${path}`);
    if (problem !== null) {
      first ??= { line: line.lineNo, message: problem };
      continue;
    }
    const agent = (row.agent_ref as JsonObject).name as string;
    let server = -1;
    let unroutable: string | null = null;
    try {
      server = servers.id(resolveServer(routing, rowRouteOf(row)));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      unroutable = err.message;
    }
    const key = keyId({ task: Number(row._ng_task_index), rollout: Number(row._ng_rollout_index) });
    const params = isJsonObject(row.responses_create_params);
    const { lineNo, offset, length, digest } = line;
    const nums = encode.input({ line: lineNo, offset, length, digest, agent: agents.id(agent), server, params });
    await join.add({ key, nums, text: unroutable });
  }
  return first;
}
