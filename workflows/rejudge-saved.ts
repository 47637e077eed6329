/**
 * `--rejudge-saved` (the run store's re-verification of a selected saved result, docs/usage.md):
 * before the run's rounds, the selected scored rows of the output are judged again from their saved
 * answers (reverify-selected.ts) and settled in place. Each batch is admitted when the workflow
 * schedules it (its operation id prefix is in the history before the judge is called; no row is);
 * a graded answer settles its row (the saved row with its grading replaced), written by
 * `settleSavedRows` once every batch is in (crash-safe: temp file, rename) whose new length the workflow records; an answer
 * without a grade is withdrawn and a failure saves nothing: the saved row stays as it was.
 */
import { workflowInfo } from '@temporalio/workflow';
import { savedOperationPrefix } from '../src/contract/rejudgment.js';
import type { BatchResult, RunSpec } from '../src/contract/run-spec.js';
import { quick } from './activity-proxies.js';
import { enterPhase } from './details.js';
import { planSelected, reverifySelected, type SelectedUse } from './reverify-selected.js';
import type { RunState } from './run-state.js';

/** Keys `--rejudge-saved` named that the output does not hold, listed in the message at most. */
const LISTED = 10;

export async function rejudgeSaved(spec: RunSpec, st: RunState): Promise<void> {
  const ask = spec.rejudgeSaved;
  if (!ask || !st.outputs || spec.atif) return;
  enterPhase(st, 'rejudge-saved');
  const use: SelectedUse = { tag: 'saved', operation: savedOperationPrefix(workflowInfo().firstExecutionRunId), what: 'rejudge saved' };
  const sel = await planSelected(spec, st, use, { kind: 'keys', keys: ask.keys }, 0);
  if (sel.missing.length > 0) {
    const more = sel.missing.length > LISTED ? `, and ${sel.missing.length - LISTED} more` : '';
    st.messages.push(
      `--rejudge-saved: ${sel.missing.length} key(s) have no saved row in the output, nothing to settle: ${sel.missing.slice(0, LISTED).join(', ')}${more}`,
    );
  }
  if (sel.refused.length > 0)
    st.messages.push(
      `--rejudge-saved: ${sel.refused.length} saved row(s) cannot be re-verified, left as they are: ${sel.refused.slice(0, LISTED).join('; ')}`,
    );
  const n = { settled: 0, withdrawn: 0, failed: 0 };
  const parts: string[] = [];
  // The batches' verdicts are published in the work directory; all are settled by one rewrite once
  // the last is in (the plan's offsets point into the output as it is until then).
  const collect = (r: BatchResult): Promise<void> => {
    parts.push(r.mainPart);
    n.settled += r.main;
    n.withdrawn += r.withdrawn ?? 0;
    n.failed += r.failed + r.dropped;
    return Promise.resolve();
  };
  const whole = await reverifySelected(spec, st, sel.plan, use, collect);
  if (parts.length > 0) {
    const done = await quick.settleSavedRows.executeWithOptions({ summary: `rejudge saved: settle ${n.settled} row(s) in the output` }, [
      { output: st.outputs.output, mainLength: st.mainLength, parts },
    ]);
    st.mainLength = done.mainLength;
  }
  // Rows scored by this run come after the settled output (the noise sample draws from them).
  if (st.mainOpenedAt !== undefined) st.mainOpenedAt = st.mainLength;
  st.messages.push(
    `Re-verified ${sel.plan.rows} saved row(s) from their saved answers: ${n.settled} settled (grading replaced), ` +
      `${n.withdrawn} withdrawn (answered without a grade: the saved row stays), ${n.failed} failed (nothing saved: the saved row stays)` +
      (whole ? '' : '; cut short: the request budget is spent'),
  );
}
