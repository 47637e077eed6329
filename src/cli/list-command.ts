import { connectClient, resolveTemporal, runUiUrl } from '../temporal/connection.js';
import { duration } from './progress-view.js';
import { runReport, type RunReport } from './run-report.js';

/** The newest runs `list` shows. */
const LIMIT = 100;

/** One row of `reverify list`: where the run writes, its state, progress, start and duration. */
export interface ListedRun {
  output: string | null;
  state: string;
  /** Live: `finished/planned attempts`; completed: `scored/planned rollouts`; else empty. */
  progress: string;
  started: string;
  durationSeconds: number;
  workflowId: string;
}

function progressOf(r: RunReport): string {
  if (r.live) return `${r.live.finished}/${r.live.planned} attempts${r.live.paused ? ' (paused)' : ''}`;
  if (r.result) return `${r.result.rollouts.scored}/${r.result.rollouts.planned ?? '?'} scored`;
  return '';
}

/**
 * `reverify list [--json]`: the runs on the server (newest first, at most 100): output path, state,
 * progress, start and duration. The output path is the start summary `reverify <path>` that
 * `reverify run` sets.
 */
export async function listCommand(out: (line: string) => void, opts: { json?: boolean } = {}): Promise<ListedRun[]> {
  const target = await resolveTemporal();
  const { client, close } = await connectClient(target);
  try {
    const runs: ListedRun[] = [];
    for await (const info of client.workflow.list({ query: "WorkflowType = 'reverifyRun'" })) {
      if (runs.length >= LIMIT) break;
      const r = await runReport(client, info.workflowId, runUiUrl(target, info.workflowId), { sampleMs: 0, pollers: false }).catch(
        () => null,
      );
      if (!r) continue;
      runs.push({
        output: r.output,
        state: r.state,
        progress: progressOf(r),
        started: r.started,
        durationSeconds: r.durationSeconds,
        workflowId: r.workflowId,
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
