/** The failures sidecar counted by `_ng_failure_class`, streamed (rows are never kept). */
import { rawField } from '../contract/json-spans.js';
import { FAILURE_CLASS_KEY } from '../contract/keys.js';
import { exists } from '../io/file-exists.js';
import { jsonlLines } from '../io/jsonl-lines.js';

export interface SidecarCounts {
  rows: number;
  byClass: Record<string, number>;
}

/** Counts of the sidecar's rows per failure class; null when there is no sidecar. */
export async function sidecarClasses(path: string): Promise<SidecarCounts | null> {
  if (!(await exists(path))) return null;
  const byClass: Record<string, number> = {};
  let rows = 0;
  for await (const line of jsonlLines(path)) {
    if (line.text.trim() === '') continue;
    rows++;
    let cls = '(none)';
    try {
      const raw = rawField(line.text, FAILURE_CLASS_KEY);
      const v = raw === undefined ? null : (JSON.parse(raw) as unknown);
      if (typeof v === 'string') cls = v;
    } catch {
      cls = '(unreadable row)';
    }
    byClass[cls] = (byClass[cls] ?? 0) + 1;
  }
  return { rows, byClass };
}
