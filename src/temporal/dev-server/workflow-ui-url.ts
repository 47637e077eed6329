/** Links into the Temporal Web UI. */

/** Page of a workflow in the Web UI (the UI redirects to its latest run). */
export function workflowUiUrl(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/**
 * The User Metadata tab of one run of a workflow (`workflowUrl`: its `workflowUiUrl`): where the
 * UI (2.54) shows the run's Summary, Details and live Current Details; its default tab shows none.
 */
export function runDetailsUiUrl(workflowUrl: string, runId: string): string {
  return `${workflowUrl}/${encodeURIComponent(runId)}/user-metadata`;
}
