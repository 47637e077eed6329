/**
 * The plan of a re-verification of saved (scored) rows from their saved answers (`--noise-sample`,
 * `--rejudge-saved`; src/planning/selected-rows.ts): the selected rows of the output are the plan's
 * source rows (each has its `response`), joined by key with their materialized input rows, so a
 * `verifyBatch` sends exactly the `/verify` body `verifyRequest` builds from a rollout. Rows without
 * a `response` (nothing saved to judge again) are not selected. Also writes, beside the plan, each
 * selected row's key and first reward (the noise floor compares the second verdict with it).
 */
import { join } from 'node:path';
import { rename } from 'node:fs/promises';
import { noisePath } from '../src/contract/file-names.js';
import { RESPONSE_KEY } from '../src/contract/keys.js';
import { topLevelSpans } from '../src/contract/json-spans.js';
import { lineKeyId } from '../src/contract/row-key.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import type { RoutingTable } from '../src/contract/routing-table.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines, type JsonlLine } from '../src/io/jsonl-lines.js';
import { routeInputRow } from '../src/planning/input-route.js';
import { linePlace, planRecord, type LinePlace } from '../src/planning/key-facts.js';
import { PLAN_RECORD_BYTES, PlanWriter } from '../src/planning/plan-file.js';
import { RowSelector, type Candidate, type Selection } from '../src/planning/selected-rows.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface SelectRequest {
  /** The output whose saved rows are selected, and the byte range of it to select from. */
  output: string;
  from: number;
  to: number;
  inputsPath: string;
  routing: RoutingTable;
  selection: Selection;
  workDir: string;
  /** Names the plan and the batches' files in the work directory (`noise`, `saved`). */
  tag: string;
}

export interface SelectedPlan {
  plan: PlanSummary;
  /** Where each selected row's key and first reward are (JSON `[key, reward][]`, plan order). */
  firstsPath: string;
  /** Keys `--rejudge-saved` asked for that no saved row holds (`keyId`s). */
  missing: string[];
  /** Selected rows left out: no `response` saved, or no input row of their key. */
  noResponse: number;
  noInput: number;
  /** `noise`: the noise file the second verdicts go to (`<stem>_noise.jsonl`). */
  noisePath?: string;
}

/** A saved row as a candidate: keyed, with a `response` (else null: not selectable). */
function candidateOf(l: JsonlLine): Candidate | null | 'no-response' {
  if (isBlank(l.text) || !l.utf8 || !l.terminated) return null;
  let key: string | null;
  let spans: Map<string, { start: number; end: number }>;
  try {
    key = lineKeyId(l.text);
    spans = topLevelSpans(l.text);
  } catch {
    return null;
  }
  if (key === null) return null;
  if (!spans.has(RESPONSE_KEY)) return 'no-response';
  const r = spans.get('reward');
  const value: unknown = r === undefined ? null : JSON.parse(l.text.slice(r.start, r.end));
  return { key, offset: l.offset, length: l.length, line: l.lineNo, digest: l.digest, reward: typeof value === 'number' ? value : null };
}

/** The saved rows of the range, offered to the selector; returns how many had no `response`. */
async function selectRows(req: SelectRequest, selector: RowSelector): Promise<number> {
  let noResponse = 0;
  for await (const l of jsonlLines(req.output, req.from, { digests: true })) {
    if (l.offset >= req.to) break;
    const c = candidateOf(l);
    if (c === 'no-response') noResponse++;
    else if (c !== null) selector.offer(c);
  }
  return noResponse;
}

/** Names numbered in first-seen order, as the plan's agent and server tables. */
class Names {
  readonly list: string[] = [];
  index(name: string): number {
    const at = this.list.indexOf(name);
    return at >= 0 ? at : this.list.push(name) - 1;
  }
}

/** The input rows of the chosen keys: their places and routes. */
async function inputsOf(req: SelectRequest, keys: Set<string>, agents: Names, servers: Names) {
  const found = new Map<string, LinePlace & { agent: number; server: number }>();
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

/** Selects, joins and writes the plan (see the file comment). */
export async function writeSelectedPlan(req: SelectRequest): Promise<SelectedPlan> {
  const selector = new RowSelector(req.selection);
  const noResponse = await selectRows(req, selector);
  const chosen = selector.chosen();
  const agents = new Names();
  const servers = new Names();
  const inputs = await inputsOf(req, new Set(chosen.map((c) => c.key)), agents, servers);
  const planPath = join(req.workDir, `plan-${req.tag}.bin`);
  const writer = await PlanWriter.create(`${planPath}.tmp`, PLAN_RECORD_BYTES);
  const firsts: Array<[string, number | null]> = [];
  const rowsPerAgent: Record<string, number> = {};
  try {
    for (const c of chosen) {
      const input = inputs.get(c.key);
      if (input === undefined) continue;
      await writer.add(planRecord({ line: c.line, offset: c.offset, length: c.length, digest: c.digest }, input));
      firsts.push([c.key, c.reward]);
      const agent = agents.list[input.agent];
      rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
    }
  } finally {
    await writer.close();
  }
  await rename(`${planPath}.tmp`, planPath);
  const firstsPath = join(req.workDir, `${req.tag}-firsts.json`);
  await writeFileAtomic(firstsPath, JSON.stringify(firsts));
  const plan: PlanSummary = {
    planPath,
    recordBytes: PLAN_RECORD_BYTES,
    sourcePath: req.output,
    rows: writer.count,
    agents: agents.list,
    servers: servers.list,
    rowsPerAgent,
  };
  const noise = req.tag === 'noise' ? { noisePath: noisePath(req.output) } : {};
  return { plan, firstsPath, missing: selector.missing(), noResponse, noInput: chosen.length - writer.count, ...noise };
}

/** The activity: see `writeSelectedPlan`. */
export function planSelected(req: SelectRequest): Promise<SelectedPlan> {
  return failFastOnUserError(() => whileHeartbeating(() => writeSelectedPlan(req)));
}
