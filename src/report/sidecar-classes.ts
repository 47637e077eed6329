/** The failures sidecar counted by `_ng_failure_class`, streamed (rows are never kept). */
import { rawField } from '../contract/json-spans.js';
import { FAILURE_CLASS_KEY } from '../contract/keys.js';
import { exists } from '../io/file-exists.js';
import { MemberNames } from '../contract/json-line-scan.js';
import { forEachScannedLine } from '../io/scanned-lines.js';

export interface SidecarCounts {
  rows: number;
  byClass: Record<string, number>;
}

const CLASS_MEMBER = new MemberNames([FAILURE_CLASS_KEY]);

/** The class a row's raw `_ng_failure_class` value names: a string, else `(none)`. */
function classOf(raw: string | undefined): string {
  const v = raw === undefined ? null : (JSON.parse(raw) as unknown);
  return typeof v === 'string' ? v : '(none)';
}

/**
 * Counts of the sidecar's rows per failure class; null when there is no sidecar. A line the byte
 * scanner vouches for is read from its bytes; any other on its text, as before (a row that is not
 * a readable object counts as `(unreadable row)`).
 */
export async function sidecarClasses(path: string): Promise<SidecarCounts | null> {
  if (!(await exists(path))) return null;
  const byClass: Record<string, number> = {};
  let rows = 0;
  await forEachScannedLine(path, CLASS_MEMBER, (scanned) => {
    let cls: string;
    if (scanned.vouched) cls = classOf(scanned.raw(0));
    else {
      const { text } = scanned.line();
      if (text.trim() === '') return;
      try {
        cls = classOf(rawField(text, FAILURE_CLASS_KEY));
      } catch {
        cls = '(unreadable row)';
      }
    }
    rows++;
    byClass[cls] = (byClass[cls] ?? 0) + 1;
  });
  return { rows, byClass };
}
