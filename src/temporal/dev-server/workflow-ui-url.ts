/** Links into the Temporal Web UI. */

/** Page of a workflow in the Web UI (the UI redirects to its latest run). */
export function workflowUiUrl(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
