/**
 * The `🚨 … rollout dropped from the score` lines of a run whose judge failures are re-judged in
 * later rounds, printed once at its end for the rollouts still missing from the score: one line per
 * key, from its last sidecar row of this run, in the sidecar's order. Their count is the run's
 * `missing`. A key this run routed to the sidecar is scored only by a re-judgment round, so only
 * the main output's rows past `mainAtRejudge` (where the first re-judgment round began) are read.
 */
import { droppedFromScore } from '../contract/dropped-row.js';
import { jsonlLines } from '../io/jsonl-lines.js';
import { keyIdOf, type SidecarWatch } from './sidecar-watch.js';

/** Key ids of the main output's rows from `from` on. */
async function keysFrom(output: string, from: number): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const line of jsonlLines(output, from)) {
    const key = keyIdOf(line.text);
    if (key !== null) keys.add(key);
  }
  return keys;
}

/** The lines, or none when the files cannot be read here (a run on other machines). */
export async function missingAlarms(watch: SidecarWatch, output: string, mainAtRejudge: number | null | undefined): Promise<string[]> {
  try {
    const scored = typeof mainAtRejudge === 'number' ? await keysFrom(output, mainAtRejudge) : new Set<string>();
    const offsets = new Set<number>();
    for (const [key, offset] of watch.lastRowOf) if (!scored.has(key)) offsets.add(offset);
    const lines: string[] = [];
    if (offsets.size === 0) return lines;
    for await (const row of jsonlLines(watch.path, watch.from)) {
      if (!offsets.has(row.offset)) continue;
      const dropped = droppedFromScore(row.text);
      if (dropped) lines.push(dropped.line);
      if (lines.length === offsets.size) break;
    }
    return lines;
  } catch {
    return [];
  }
}
