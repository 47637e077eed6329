/**
 * `--noise-sample N` (docs/statistics.md "Judge noise floor"): once the run's rounds are done, N rows
 * this run scored, drawn by a recorded seed, are judged a second time from their saved answers
 * (reverify-selected.ts), their second verdicts appended to the noise file (`<stem>_noise.jsonl`)
 * exactly once as batches are to the output (the commit activity, truncating to the recorded
 * length), and the judge's agreement with itself computed from the two files. The output, the
 * sidecar and the run's counts are never changed; the requests count in the budget.
 */
import type { BatchResult, RunSpec } from '../src/contract/run-spec.js';
import { quick } from './activity-proxies.js';
import { enterPhase } from './details.js';
import { planSelected, reverifySelected, type SelectedUse } from './reverify-selected.js';
import type { RunState } from './run-state.js';

const USE: SelectedUse = { tag: 'noise', what: 'noise sample' };

/** The noise sample, when asked for and the run scored rows (not in recovery or ATIF runs). */
export async function noiseSample(spec: RunSpec, st: RunState): Promise<void> {
  const ask = spec.noiseSample;
  if (!ask || ask.rows < 1 || !st.outputs || spec.judgeFailedOnly || spec.atif) return;
  enterPhase(st, 'noise-sample');
  const sel = await planSelected(spec, st, USE, { kind: 'sample', rows: ask.rows, seed: ask.seed }, st.mainOpenedAt ?? 0);
  const path = sel.noisePath!;
  st.noise = { requested: ask.rows, seed: ask.seed, path, sampled: 0, floor: null, text: null };
  let length = 0;
  const append = async (parts: string[], summary: string) => {
    const lengths = await quick.commitBatches.executeWithOptions({ summary }, [
      {
        outputs: { output: path, sidecar: st.outputs!.sidecar },
        lockOf: st.outputs!.output,
        mainLength: length,
        sidecarLength: st.sidecarLength,
        mainParts: parts,
        sidecarParts: [],
        obsolete: [],
      },
    ]);
    length = lengths.mainLength;
  };
  // A noise file of an earlier run is emptied first: it holds this run's second verdicts only.
  await append([], 'noise sample: start the noise file');
  const commit = async (r: BatchResult) => {
    await append([r.mainPart, r.sidecarPart], `noise sample: commit batch ${r.batch + 1}`);
    st.noise!.sampled += r.main + r.failed + r.dropped;
  };
  const whole = await reverifySelected(spec, st, sel.plan, USE, commit);
  if (!whole)
    st.messages.push(`Noise sample cut short: the request budget is spent (${st.noise.sampled} of ${sel.plan.rows} row(s) re-judged)`);
  const agreement = await quick.noiseAgreement.executeWithOptions({ summary: 'noise sample: the judge agreement' }, [
    { firstsPath: sel.firstsPath, noisePath: path, requested: ask.rows },
  ]);
  st.noise.floor = agreement.floor;
  st.noise.text = agreement.text;
}
