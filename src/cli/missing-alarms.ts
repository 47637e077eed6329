/**
 * The `🚨 … rollout dropped from the score` lines of a run whose judge failures are re-judged in
 * later rounds, printed once at its end for the rollouts still missing from the score: one line per
 * key, from its last sidecar row of this run, in the sidecar's order. Their count is the run's
 * `missing`. A key this run routed to the sidecar is scored only by a re-judgment round, so only
 * the main output's rows past `mainAtRejudge` (where the first re-judgment round began) are read,
 * keeping only the keys routed there (memory bounded by the failures, not the output).
 */
import { droppedFromScore } from '../contract/dropped-row.js';
import { jsonlLines } from '../io/jsonl-lines.js';
import { keyIdOf, type SidecarWatch } from './sidecar-watch.js';

/** Key ids among `routed` that the main output's rows from `from` on score. */
async function scoredFrom(output: string, from: number, routed: ReadonlyMap<string, number>): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const line of jsonlLines(output, from)) {
    const key = keyIdOf(line.text);
    if (key !== null && routed.has(key)) keys.add(key);
  }
  return keys;
}

/** The lines, or none when the files cannot be read here (a run on other machines). */
export async function missingAlarms(watch: SidecarWatch, output: string, mainAtRejudge: number | null | undefined): Promise<string[]> {
  try {
    const scored = typeof mainAtRejudge === 'number' ? await scoredFrom(output, mainAtRejudge, watch.lastRowOf) : new Set<string>();
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
