/**
 * The plan's last pass: the verdicts in file order — apply the limit, stop at the first error,
 * count what is skipped, and write the rows to verify as the plan file, with their attempts row for
 * row (src/planning/plan-files.ts), in file order or by their rank in the plan's order (`--order
 * random`, `--dispatch-longest-first`; task-order.ts `planRank`), through an external sort.
 */
import { InputError } from '../../src/contract/errors.js';
import { ExternalSorter } from '../../src/io/external-sort.js';
import {
  compareOrderedPlanRecords,
  orderedPlanRecord,
  orderedPlanRecordCodec,
  writePlanBytes,
  type OrderedPlanRecord,
} from '../../src/planning/ordered-plan-records.js';
import { ATTEMPTS_BYTES } from '../../src/planning/plan-attempts.js';
import { encodedAgent, PLAN_RECORD_BYTES } from '../../src/planning/plan-file.js';
import { PlanFilesWriter, type PlanPaths } from '../../src/planning/plan-files.js';
import { Verdict, type VerdictCursor, type VerdictFile } from '../../src/planning/plan-verdicts.js';
import type { PlanOrder } from '../../src/planning/task-order.js';

/** What the pass wrote and skipped. */
export interface PlanRecords {
  /** Rows written to the plan. */
  rows: number;
  /** Source rows within the limit (yielded), of them repeats of an earlier key, and the skips of --resume. */
  yielded: number;
  duplicates: number;
  skipped: { done: number; terminal: number; maxed: number };
  rowsPerAgent: Record<string, number>;
}

/** How the pass writes: the limit, the agents' names, the order, and where an ordering sort spills. */
export interface PlanRecordsOptions {
  limit: number | null;
  agents: readonly string[];
  order: PlanOrder;
  workDir: string;
  sortMaxRecords?: number;
}

/** Where the pass puts the rows to verify, and how it ends. */
interface PlanSink {
  /** Adds a `Plan` verdict's row; a promise only when it must be awaited. */
  add(row: VerdictCursor): Promise<void> | undefined;
  finish(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * The plan writer itself (file order: each record and its attempts word copied as the verdicts hold
 * them), or a sort by (rank, ordinal) drained into it at the end.
 */
function planSink(writer: PlanFilesWriter, opts: PlanRecordsOptions): PlanSink {
  const done = () => Promise.resolve();
  if (opts.order.kind === 'file')
    return { add: (row) => writer.addEncoded(row.planBytes, row.planAt, row.attemptsWord()), finish: done, dispose: done };
  const sorter = new ExternalSorter<OrderedPlanRecord>({
    dir: opts.workDir,
    name: 'plan-order',
    compare: compareOrderedPlanRecords,
    codec: orderedPlanRecordCodec,
    maxRecords: opts.sortMaxRecords,
  });
  // The record and its attempts word, adjacent in the verdicts, go through the sort as one run of words.
  const bytes = Buffer.alloc(PLAN_RECORD_BYTES + ATTEMPTS_BYTES);
  return {
    add: (row) => sorter.add(orderedPlanRecord(row.rank(), row.ordinal, row.planBytes, row.planAt, bytes.length)),
    finish: async () => {
      for await (const chunk of sorter.sortedChunks()) {
        for (const r of chunk) {
          writePlanBytes(r, bytes, 0);
          const adding = writer.addEncoded(bytes, 0, bytes.readUInt32LE(PLAN_RECORD_BYTES));
          if (adding) await adding;
        }
      }
    },
    dispose: () => sorter.dispose(),
  };
}

/**
 * Writes the planned rows of ordinals `[0, ordinals)` to the plan's files `paths`, the first
 * `limit` yielded rows; `stopMessage(ordinal)` is the message of the error that stops the run at an
 * `Error` verdict. The limit and the first error are decided in file order, whatever the plan's order.
 */
export async function writePlanRecords(
  paths: PlanPaths,
  verdicts: VerdictFile,
  ordinals: number,
  opts: PlanRecordsOptions,
  stopMessage: (ordinal: number) => Promise<string>,
): Promise<PlanRecords> {
  const { limit, agents } = opts;
  const writer = await PlanFilesWriter.create(paths);
  const sink = planSink(writer, opts);
  const out: PlanRecords = { rows: 0, yielded: 0, duplicates: 0, skipped: { done: 0, terminal: 0, maxed: 0 }, rowsPerAgent: {} };
  const { skipped, rowsPerAgent } = out;
  try {
    for (const row of verdicts.inOrder(ordinals)) {
      const { ordinal, verdict } = row;
      if (limit !== null && out.yielded >= limit) break;
      if (verdict === Verdict.NotYielded) continue;
      if (verdict === Verdict.Error) throw new InputError(await stopMessage(ordinal));
      out.yielded++;
      if (verdict === Verdict.Duplicate) out.duplicates++;
      else if (verdict === Verdict.SkipDone) skipped.done++;
      else if (verdict === Verdict.SkipTerminal) skipped.terminal++;
      else if (verdict === Verdict.SkipMaxed) skipped.maxed++;
      else {
        const adding = sink.add(row);
        if (adding) await adding;
        const agent = agents[encodedAgent(row.planBytes, row.planAt)];
        rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
      }
    }
    await sink.finish();
  } finally {
    await sink.dispose();
    await writer.close();
  }
  out.rows = writer.count;
  return out;
}
