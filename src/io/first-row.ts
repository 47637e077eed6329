/** The first non-blank line of a JSONL file, read without reading the rest. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';

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
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) if (line.trim() !== '') return line;
    return null;
  } finally {
    stream.destroy();
  }
}
