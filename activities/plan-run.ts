import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { InputError } from '../src/contract/errors.js';
import { noMatchingInput } from '../src/contract/messages.js';
import { describeInputRowProblem, describeRolloutRowProblem } from '../src/contract/row-shapes.js';
import { keyId, keyOf } from '../src/contract/row-key.js';
import type { PlanSummary } from '../src/contract/run-spec.js';
import { resolveServer, type RoutingTable } from '../src/config/routing.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { PlanWriter } from '../src/io/plan-file.js';
import { InputIndex } from './input-index.js';
import { failFastOnUserError } from './user-errors.js';

export interface PlanRequest {
  inputsPath: string;
  rolloutsPath: string;
  workDir: string;
  routing: RoutingTable;
  limit: number | null;
}

function parseLine(path: string, lineNo: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}:${lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line`);
  }
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
 * Plan phase (spec §4.7): index the materialized inputs by key (byte offsets, last duplicate wins),
 * stream the source rows once in file order, join each with its input, resolve its resources server,
 * apply `limit`, and write the plan file. Every line is validated here, so bad input stops the run
 * with `file:line: reason` before any request is sent. Returns counts only.
 */
export function planRun() {
  return (req: PlanRequest): Promise<PlanSummary> =>
    failFastOnUserError(async () => {
      await mkdir(req.workDir, { recursive: true });
      try {
        return await writePlan(req);
      } catch (err) {
        // Bad input leaves nothing behind: no plan, and no work directory if it holds nothing else.
        await rm(join(req.workDir, 'plan.bin.tmp'), { force: true });
        await rmdir(req.workDir).catch(() => undefined);
        throw err;
      }
    });
}

async function writePlan(req: PlanRequest): Promise<PlanSummary> {
      const agents = new Names();
      const servers = new Names();
      const index = new InputIndex();
      let seen = 0;
      for await (const line of jsonlLines(req.inputsPath)) {
        if (isBlank(line.text)) continue;
        const row = parseLine(req.inputsPath, line.lineNo, line.text) as Record<string, unknown>;
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
        if (++seen % 10000 === 0) heartbeat({ phase: 'inputs', rows: seen });
      }

      const planPath = join(req.workDir, 'plan.bin');
      const tmpPath = `${planPath}.tmp`;
      const writer = await PlanWriter.create(tmpPath);
      const rowsPerAgent: Record<string, number> = {};
      try {
        for await (const line of jsonlLines(req.rolloutsPath)) {
          if (req.limit !== null && writer.count >= req.limit) break;
          if (isBlank(line.text)) continue;
          const row = parseLine(req.rolloutsPath, line.lineNo, line.text) as Record<string, unknown>;
          const problem = describeRolloutRowProblem(row);
          if (problem) throw new InputError(`${req.rolloutsPath}:${line.lineNo}: ${problem}`);
          const key = keyOf(row)!;
          const input = index.get(keyId(key));
          if (!input) throw new InputError(noMatchingInput(req.rolloutsPath, line.lineNo, key, req.inputsPath));
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
          if (writer.count % 10000 === 0) heartbeat({ phase: 'rollouts', rows: writer.count });
        }
      } finally {
        await writer.close();
      }
      await rename(tmpPath, planPath);
      const summary: PlanSummary = { planPath, rows: writer.count, agents: agents.list, servers: servers.list, rowsPerAgent };
      await writeFileAtomic(join(req.workDir, 'plan.json'), JSON.stringify(summary));
      return summary;
}
