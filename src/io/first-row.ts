/** The first non-blank line of a JSONL file, read without reading the rest. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** The first line of `path` that is not blank, or null (no file, or only blank lines). */
export async function firstRow(path: string): Promise<string | null> {
  let stream;
  try {
    stream = createReadStream(path, { encoding: 'utf8' });
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    for await (const line of lines) if (line.trim() !== '') return line;
    return null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  } finally {
    stream?.destroy();
  }
}
