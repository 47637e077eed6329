/**
 * The scan behind a re-verification of saved rows (`--noise-sample`, `--rejudge-saved`): the
 * selected rows of the output (selected-rows.ts), joined by key with their materialized input rows
 * and routed. Shared by the plan activity (activities/plan-selected.ts) and the dry run of
 * `--rejudge-saved` (src/cli/rejudge-saved-check.ts). Memory holds the selected rows' places only.
 */
import { topLevelSpans } from '../contract/json-spans.js';
import { savedRowProblem } from '../contract/rejudgment.js';
import { lineKeyId } from '../contract/row-key.js';
import type { RoutingTable } from '../contract/routing-table.js';
import { isBlank, jsonlLines, type JsonlLine } from '../io/jsonl-lines.js';
import { routeInputRow } from './input-route.js';
import { linePlace, type LinePlace } from './key-facts.js';
import { RowSelector, type Candidate, type Selection } from './selected-rows.js';

export interface SavedScan {
  output: string;
  /** The byte range of the output to select from. */
  from: number;
  to: number;
  inputsPath: string;
  routing: RoutingTable;
  selection: Selection;
}

export interface SavedSelection {
  selector: RowSelector;
  chosen: Candidate[];
  /** Each chosen row's input row (absent: no input row of its key), its agent and server numbered in `agents`, `servers`. */
  inputs: Map<string, LinePlace & { agent: number; server: number }>;
  agents: string[];
  servers: string[];
}

/** A saved row as a candidate (null: blank, cut off, not one JSON object, or keyless). */
function candidateOf(l: JsonlLine): Candidate | null {
  if (isBlank(l.text) || !l.utf8 || !l.terminated) return null;
  try {
    const key = lineKeyId(l.text);
    if (key === null) return null;
    const spans = topLevelSpans(l.text);
    const r = spans.get('reward');
    const value: unknown = r === undefined ? null : JSON.parse(l.text.slice(r.start, r.end));
    const reward = typeof value === 'number' ? value : null;
    return { key, offset: l.offset, length: l.length, line: l.lineNo, digest: l.digest, reward, problem: savedRowProblem(spans) };
  } catch {
    return null;
  }
}

/** Names numbered in first-seen order, as a plan's agent and server tables. */
class Names {
  readonly list: string[] = [];
  index(name: string): number {
    const at = this.list.indexOf(name);
    return at >= 0 ? at : this.list.push(name) - 1;
  }
}

/** The input rows of `keys`: their places and routes. */
async function inputsOf(req: SavedScan, keys: Set<string>, agents: Names, servers: Names) {
  const found: SavedSelection['inputs'] = new Map();
  for await (const l of jsonlLines(req.inputsPath, 0, { digests: true })) {
    if (isBlank(l.text) || !l.utf8) continue;
    let key: string | null = null;
    try {
      key = lineKeyId(l.text);
    } catch {
      continue;
    }
    if (key === null || !keys.has(key) || found.has(key)) continue;
    const route = routeInputRow(JSON.parse(l.text) as Record<string, unknown>, l.text, req.routing, `${req.inputsPath}:${l.lineNo}`);
    found.set(key, { ...linePlace(l), agent: agents.index(route.agent), server: servers.index(route.server) });
  }
  return found;
}

/** Selects the saved rows and finds their input rows. */
export async function scanSavedRows(req: SavedScan): Promise<SavedSelection> {
  const selector = new RowSelector(req.selection);
  // Lines are numbered from the start of the file, so messages name them as an editor does.
  for await (const l of jsonlLines(req.output, 0, { digests: true })) {
    if (l.offset < req.from) continue;
    if (l.offset >= req.to) break;
    const c = candidateOf(l);
    if (c !== null) selector.offer(c);
  }
  const chosen = selector.chosen();
  const agents = new Names();
  const servers = new Names();
  const inputs = await inputsOf(req, new Set(chosen.map((c) => c.key)), agents, servers);
  return { selector, chosen, inputs, agents: agents.list, servers: servers.list };
}
