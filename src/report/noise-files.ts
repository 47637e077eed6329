/**
 * The judge noise floor as the report reads it from the files (`--noise-sample`): each row of the
 * noise file (`<stem>_noise.jsonl`, the second verdicts) joined by key with its row of the main
 * output (the first), through src/stats/noise-floor.ts. Memory holds the noise file's keys only.
 */
import { existsSync } from 'node:fs';
import { topLevelSpans } from '../contract/json-spans.js';
import { noisePath } from '../contract/file-names.js';
import { lineKeyId } from '../contract/row-key.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';
import { noiseFloor, type NoiseFloor, type NoisePair } from '../stats/noise-floor.js';

/** The noise floor and its file, or null when the run took no noise sample. */
export type ReportNoise = (NoiseFloor & { path: string }) | null;

/** Each keyed row's `reward` (null: not a number), for the keys `only` holds (all when absent). */
async function rewardsByKey(path: string, only?: ReadonlySet<string>): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  for await (const l of jsonlLines(path)) {
    if (isBlank(l.text)) continue;
    let key: string | null;
    try {
      key = lineKeyId(l.text);
    } catch {
      continue;
    }
    if (key === null || (only && !only.has(key)) || out.has(key)) continue;
    const r = topLevelSpans(l.text).get('reward');
    const v: unknown = r === undefined ? null : JSON.parse(l.text.slice(r.start, r.end));
    out.set(key, typeof v === 'number' ? v : null);
  }
  return out;
}

/** The noise floor of the run writing `output`, from its noise file and its output. */
export async function noiseFromFiles(output: string): Promise<ReportNoise> {
  const path = noisePath(output);
  if (!existsSync(path)) return null;
  const seconds = await rewardsByKey(path);
  const firsts = existsSync(output) ? await rewardsByKey(output, new Set(seconds.keys())) : new Map<string, number | null>();
  const pairs: NoisePair[] = [];
  for (const [key, second] of seconds) {
    const first = firsts.get(key);
    if (typeof first === 'number') pairs.push({ first, second });
  }
  return { ...noiseFloor(pairs), path };
}
