import { connectClient, resolveTemporal, runUiUrl } from '../temporal/connection.js';
import { listedInvocations } from '../temporal/run-history.js';
import { duration } from './progress-view.js';
import { runReport, type RunReport } from './run-report.js';

/** The newest runs `list` shows. */
const LIMIT = 100;

/**
 * One row of `reverify list`: one invocation of an output (a `reverify run` that started its
 * workflow: fresh, or again after an earlier one ended), with its OWN state, progress, start and
 * duration; the runs it continued as new into are part of it.
 */
export interface ListedRun {
  output: string | null;
  state: string;
  /** Live: `finished/planned attempts`; completed: `scored/planned rollouts`; else empty. */
  progress: string;
  started: string;
  durationSeconds: number;
  workflowId: string;
  /** The invocation's last run (the one holding its state). */
  runId: string;
}

function progressOf(r: RunReport): string {
  if (r.live) return `${r.live.finished}/${r.live.planned} attempts${r.live.paused ? ' (paused)' : ''}`;
  if (r.result) return `${r.result.rollouts.scored}/${r.result.rollouts.planned ?? '?'} scored`;
  return '';
}

/**
 * `reverify list [--json]`: the runs on the server (newest first, at most 100), each invocation of
 * an output on its own line with its own state (a cancelled one CANCELLED, whatever ran after it):
 * output path, state, progress, start and duration. The output path is the start summary
 * `reverify <path>` that `reverify run` sets.
 */
export async function listCommand(out: (line: string) => void, opts: { json?: boolean } = {}): Promise<ListedRun[]> {
  const target = await resolveTemporal();
  const { client, close } = await connectClient(target);
  try {
    const runs: ListedRun[] = [];
    for (const inv of await listedInvocations(client, LIMIT)) {
      const r = await runReport(client, inv.workflowId, runUiUrl(target, inv.workflowId), {
        sampleMs: 0,
        pollers: false,
        runId: inv.runId,
        startedAt: inv.started,
      }).catch(() => null);
      if (!r) continue;
      runs.push({
        output: r.output,
        state: r.state,
        progress: progressOf(r),
        started: r.started,
        durationSeconds: r.durationSeconds,
        workflowId: r.workflowId,
        runId: r.runId,
      });
    }
    if (opts.json) {
      out(JSON.stringify(runs));
      return runs;
    }
    if (runs.length === 0) out(`No reverify runs on ${target.address}.`);
    for (const r of runs)
      out(
        `${r.state.padEnd(10)} ${r.progress.padEnd(24)} ${r.started}  ${duration(r.durationSeconds).padStart(7)}  ${r.output ?? r.workflowId}`,
      );
    return runs;
  } finally {
    await close();
  }
}
