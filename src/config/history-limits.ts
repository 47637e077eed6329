import type { WorkflowInfo } from '@temporalio/workflow';

/**
 * When a run continues as new. Temporal suggests it from 4,096 events or 4 MiB of history (its
 * defaults `limit.historyCount.suggestContinueAsNew`, `limit.historySize.suggestContinueAsNew`),
 * far below its hard limits (51,200 events, 50 MiB). Each continue-as-new drains the verify window
 * (the next generation starts only once every batch in flight has ended, the slowest answer of a
 * judge's heavy tail among them), so a run follows the suggestion only once its history holds
 * `CONTINUE_AS_NEW_EVENTS` events or `CONTINUE_AS_NEW_BYTES` bytes: under Temporal's warning
 * levels (10,240 events, 10 MiB), with half as many drains. A cluster that suggests it later is
 * followed as it says.
 */
export const CONTINUE_AS_NEW_EVENTS = 8 * 1024;
export const CONTINUE_AS_NEW_BYTES = 8 * 1024 * 1024;

/** What a run knows of its history (`workflowInfo()`): Temporal's suggestion, its events and bytes. */
export type HistoryNow = Pick<WorkflowInfo, 'continueAsNewSuggested' | 'historyLength' | 'historySize'>;

export function continueAsNewDue(h: HistoryNow): boolean {
  return h.continueAsNewSuggested && (h.historyLength >= CONTINUE_AS_NEW_EVENTS || h.historySize >= CONTINUE_AS_NEW_BYTES);
}
