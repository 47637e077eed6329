import { existsSync } from 'node:fs';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../src/contract/errors.js';
import { sidecarPath } from '../src/contract/file-names.js';
import { noMatchingInput, resumeSummary, skippingResume } from '../src/contract/messages.js';
import { isJudgeFailure } from '../src/contract/outcome.js';
import { describeInputRowProblem, describeRolloutRowProblem } from '../src/contract/row-shapes.js';
import { keyId, keyOf, keyWithNullDefaults } from '../src/contract/row-key.js';
import type { OutputPaths, PlanSummary } from '../src/contract/run-spec.js';
import { resolveServer, type RoutingTable } from '../src/config/routing.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines, type JsonlLine } from '../src/io/jsonl-lines.js';
import { readOutputKeys, readResumeCache, resumeSkipReason, type ResumeCache } from '../src/io/output-cache.js';
import { PlanWriter } from '../src/io/plan-file.js';
import { InputIndex } from './input-index.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface PlanRequest {
  inputsPath: string;
  rolloutsPath: string;
  workDir: string;
  routing: RoutingTable;
  limit: number | null;
  /** Recovery (spec §4.6): the source is the sidecar of --rollouts, filtered to judge failures. */
  judgeFailedOnly: boolean;
  /** Skip what the outputs already hold (spec §4.8). */
  resume: boolean;
  outputs: Pick<OutputPaths, 'output' | 'sidecar'>;
  /** True when the prepare phase will delete the outputs (`--overwrite` without resume/append). */
  outputsCleared: boolean;
  maxAttempts: number;
  repairTruncated: boolean;
}

/** What the plan phase found, and what to tell the user about it. */
export interface PlanOutcome extends PlanSummary {
  messages: string[];
}

function parseLine(path: string, line: JsonlLine): Record<string, unknown> {
  const { lineNo, text } = line;
  if (!line.utf8) {
    throw new InputError(`${path}:${lineNo}: the line is not valid UTF-8; fix the file's encoding (JSON must be UTF-8)`);
  }
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}:${lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line`);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new InputError(`${path}:${lineNo}: not a JSON object; every line must be one row object`);
  }
  return row as Record<string, unknown>;
}

/** Interns names into small integers for the plan records. */
class Names {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(name);
      this.ids.set(name, id);
    }
    return id;
  }
}

/**
 * Plan phase (spec §4.5–§4.8): index the materialized inputs by key (byte offsets, last duplicate
 * wins), stream the source rows once in file order (the rollouts, or in recovery mode the judge
 * failures of their sidecar), join each with its input, resolve its resources server, apply `limit`
 * and then the resume cache, and write the plan file. Every line is validated here, so bad input
 * stops the run with `file:line: reason` before anything is written or sent. Returns counts only.
 */
export function planRun() {
  return (req: PlanRequest): Promise<PlanOutcome> =>
    failFastOnUserError(async () => {
      await mkdir(req.workDir, { recursive: true });
      try {
        return await whileHeartbeating(() => writePlan(req));
      } catch (err) {
        // Bad input leaves nothing behind: no plan, and no work directory if it holds nothing else.
        await rm(join(req.workDir, 'plan.bin.tmp'), { force: true });
        await rmdir(req.workDir).catch(() => undefined);
        throw err;
      }
    });
}

async function indexInputs(req: PlanRequest, agents: Names, servers: Names): Promise<InputIndex> {
  const index = new InputIndex();
  for await (const line of jsonlLines(req.inputsPath)) {
    if (isBlank(line.text)) continue;
    const row = parseLine(req.inputsPath, line);
    const problem = describeInputRowProblem(row);
    if (problem) throw new InputError(`${req.inputsPath}:${line.lineNo}: ${problem}`);
    const agentName = (row.agent_ref as { name: string }).name;
    const taskSource = typeof row.task_source === 'string' ? row.task_source : undefined;
    let server: string;
    try {
      server = resolveServer(req.routing, agentName, taskSource);
    } catch (err) {
      throw new InputError(`${req.inputsPath}:${line.lineNo}: ${(err as Error).message}`);
    }
    index.set(keyId(keyOf(row)!), line.offset, line.length, agents.id(agentName), servers.id(server));
  }
  return index;
}

/**
 * Recovery's present-set (spec §4.6.3): keys the output will hold once the successes are seeded —
 * those already in the output plus every keyed line of --rollouts. Malformed lines stop the run,
 * since seeding would copy them verbatim.
 */
async function presentAfterSeeding(req: PlanRequest): Promise<Set<string>> {
  const present = req.outputsCleared ? new Set<string>() : await readOutputKeys(req.outputs.output, req);
  for await (const line of jsonlLines(req.rolloutsPath)) {
    if (isBlank(line.text)) continue;
    const key = keyOf(parseLine(req.rolloutsPath, line));
    if (key) present.add(keyId(key));
  }
  return present;
}

async function writePlan(req: PlanRequest): Promise<PlanOutcome> {
  const agents = new Names();
  const servers = new Names();
  const messages: string[] = [];
  const sourcePath = req.judgeFailedOnly ? sidecarPath(req.rolloutsPath) : req.rolloutsPath;
  if (req.judgeFailedOnly && !existsSync(sourcePath)) {
    throw new InputError(
      `No such file or directory: '${sourcePath}': --judge-failed-only re-verifies the judge failures in the sidecar of --rollouts`,
    );
  }
  const index = await indexInputs(req, agents, servers);
  const present = req.judgeFailedOnly ? await presentAfterSeeding(req) : null;
  const kept = new Set<string>();
  // A key may be verified once per run: later duplicates in the source are skipped (first wins).
  const planned = new Map<string, number>();
  let duplicates = 0;
  let firstDuplicate = '';
  const cache: ResumeCache | null = req.resume
    ? await readResumeCache(req.outputs.output, req.outputs.sidecar, req.maxAttempts, req)
    : null;
  const skipped = { done: 0, terminal: 0, maxed: 0 };

  const planPath = join(req.workDir, 'plan.bin');
  const tmpPath = `${planPath}.tmp`;
  const writer = await PlanWriter.create(tmpPath);
  const rowsPerAgent: Record<string, number> = {};
  let yielded = 0;
  try {
    for await (const line of jsonlLines(sourcePath)) {
      if (req.limit !== null && yielded >= req.limit) break;
      if (isBlank(line.text)) continue;
      const row = parseLine(sourcePath, line);
      if (present) {
        // The recovery predicate (spec §4.6.4): judge failures only, not already present, first per key.
        if (!isJudgeFailure(row)) continue;
        const id = keyId(keyWithNullDefaults(row));
        if (present.has(id) || kept.has(id)) continue;
        kept.add(id);
      }
      yielded++;
      const problem = describeRolloutRowProblem(row);
      if (problem) throw new InputError(`${sourcePath}:${line.lineNo}: ${problem}`);
      const key = keyOf(row)!;
      const id = keyId(key);
      const input = index.get(id);
      if (!input) throw new InputError(noMatchingInput(sourcePath, line.lineNo, key, req.inputsPath));
      const firstLine = planned.get(id);
      if (firstLine !== undefined) {
        if (duplicates++ === 0) firstDuplicate = `${sourcePath}:${line.lineNo} repeats the key of line ${firstLine}`;
        continue;
      }
      planned.set(id, line.lineNo);
      const reason = cache ? resumeSkipReason(cache, id) : null;
      if (reason) {
        skipped[reason]++;
        continue;
      }
      await writer.add({
        sourceOffset: line.offset,
        sourceLength: line.length,
        sourceLine: line.lineNo,
        inputOffset: input.offset,
        inputLength: input.length,
        agent: input.agent,
        server: input.server,
      });
      const agent = agents.list[input.agent];
      rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
    }
  } finally {
    await writer.close();
  }
  await rename(tmpPath, planPath);
  if (duplicates > 0) {
    messages.push(
      `WARNING: skipped ${duplicates} source row(s) whose key appeared earlier in the file (the first is verified; ` +
        `first repeat: ${firstDuplicate}). NeMo Gym would verify and write each copy.`,
    );
  }
  // In recovery the output always exists when NeMo Gym reads the cache: seeding has created it.
  if (cache && !cache.found && !req.judgeFailedOnly) messages.push(skippingResume());
  else if (cache) messages.push(resumeSummary({ total: yielded, ...skipped, remaining: writer.count }));
  const summary: PlanSummary = { planPath, sourcePath, rows: writer.count, agents: agents.list, servers: servers.list, rowsPerAgent };
  await writeFileAtomic(join(req.workDir, 'plan.json'), JSON.stringify(summary));
  return { ...summary, messages };
}
