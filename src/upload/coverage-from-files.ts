/**
 * A finished run's coverage read from its files (for `reverify upload`): `scored`, the rows of the
 * main output; `missing`, the keys of the failures sidecar that have no row in the main output.
 * Memory holds the sidecar's keys only.
 */
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';
import { lineKeyId } from '../contract/row-key.js';

async function* nonBlank(path: string): AsyncGenerator<string> {
  try {
    for await (const line of jsonlLines(path)) if (!isBlank(line.text)) yield line.text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

export async function coverageFromFiles(output: string, sidecar: string): Promise<{ scored: number; missing: number }> {
  const failed = new Set<string>();
  for await (const text of nonBlank(sidecar)) {
    const id = lineKeyId(text);
    if (id !== null) failed.add(id);
  }
  let scored = 0;
  for await (const text of nonBlank(output)) {
    scored++;
    const id = lineKeyId(text);
    if (id !== null) failed.delete(id);
  }
  return { scored, missing: failed.size };
}
