/** The first non-blank line of a JSONL file, read without reading the rest. */
import { stat } from 'node:fs/promises';
import { isBlank, jsonlLines } from './jsonl-lines.js';

/**
 * The first line of `path` that is not blank, or null: only blank lines, or no regular file there
 * (missing, a directory, or a file where a directory of the path should be: the output checks say so).
 */
export async function firstRow(path: string): Promise<string | null> {
  const isFile = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!isFile) return null;
  for await (const line of jsonlLines(path)) if (!isBlank(line.text)) return line.text;
  return null;
}
