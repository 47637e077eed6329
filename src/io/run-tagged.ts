/**
 * Finds a row stamped with a managed run's `_ng_run_id` in a file, reading every row (not only the
 * first: a plain run resumed by a managed collector, or the other way round, has tagged rows after
 * untagged ones). Only lines that contain the key's text are scanned, so a plain run costs one read.
 */
import { stat } from 'node:fs/promises';
import { topLevelSpans } from '../contract/json-spans.js';
import { RUN_ID_KEY } from '../contract/keys.js';
import { isBlank, jsonlLines } from './jsonl-lines.js';

/** The line number of the first row with a top-level `_ng_run_id`, or null (no file, none tagged). */
export async function runTaggedLine(path: string): Promise<number | null> {
  const isFile = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!isFile) return null;
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text) || !line.text.includes(RUN_ID_KEY)) continue;
    try {
      if (topLevelSpans(line.text).has(RUN_ID_KEY)) return line.lineNo;
    } catch {
      continue; // not a JSON object: whoever reads the rows reports that line
    }
  }
  return null;
}
