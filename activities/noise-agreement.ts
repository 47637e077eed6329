/**
 * The judge noise floor of a run (`--noise-sample N`; src/stats/noise-floor.ts): the first reward of
 * each re-judged row (the output's, saved beside the plan by plan-selected.ts) against its second
 * verdict in the noise file (`<stem>_noise.jsonl`), joined by key. A row whose second verdict has no
 * numeric `reward` (a failure, or no grade) is sampled but not counted.
 */
import { readFile } from 'node:fs/promises';
import { topLevelSpans } from '../src/contract/json-spans.js';
import { lineKeyId } from '../src/contract/row-key.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { noiseFloor, noiseFloorText, type NoiseFloor, type NoisePair } from '../src/stats/noise-floor.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface NoiseRequest {
  firstsPath: string;
  noisePath: string;
}

/** Rewards of the noise file by key (a row without a numeric reward: null). */
async function secondRewards(path: string): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  for await (const l of jsonlLines(path)) {
    if (isBlank(l.text)) continue;
    const key = lineKeyId(l.text);
    if (key === null) continue;
    const r = topLevelSpans(l.text).get('reward');
    const v: unknown = r === undefined ? null : JSON.parse(l.text.slice(r.start, r.end));
    out.set(key, typeof v === 'number' ? v : null);
  }
  return out;
}

/** The pairs of `firsts` (rows without a first numeric reward are left out) with their second rewards. */
export async function noisePairs(req: NoiseRequest): Promise<NoisePair[]> {
  const firsts = JSON.parse(await readFile(req.firstsPath, 'utf8')) as Array<[string, number | null]>;
  const seconds = await secondRewards(req.noisePath);
  return firsts
    .filter(([key, first]) => first !== null && seconds.has(key))
    .map(([key, first]) => ({ first: first!, second: seconds.get(key)! }));
}

/** The noise floor and its line (`noiseFloorText`) for `requested` rows asked. */
export function noiseAgreement(req: NoiseRequest & { requested: number }): Promise<{ floor: NoiseFloor; text: string }> {
  return failFastOnUserError(() =>
    whileHeartbeating(async () => {
      const floor = noiseFloor(await noisePairs(req));
      return { floor, text: noiseFloorText(floor, req.requested) };
    }),
  );
}
