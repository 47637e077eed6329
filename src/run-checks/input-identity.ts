/**
 * The run store's `start_or_resume` identity check for a plain run: a `--resume` whose `--inputs` or
 * `--rollouts` are not the files the run was started with (their digests, saved in its coverage
 * file: src/io/content-digest.ts) is refused in one line before anything is written, unless
 * `--allow-unsafe`. An output without saved digests (NeMo Gym 0.7.0's, an earlier reverify's)
 * resumes as before, planned key by key against what the files hold.
 */
import { coveragePath } from '../contract/file-names.js';
import { InputError } from '../contract/errors.js';
import type { InputIdentity } from '../contract/plan-summary.js';
import { readCoverageFile } from '../io/coverage-file.js';

export interface IdentityCheck {
  output: string;
  inputsPath: string;
  rolloutsPath: string;
  allowUnsafe?: boolean;
}

/** Throws the refusal when the saved identity of `check.output`'s run differs from `now`. */
export async function refuseOtherInputs(check: IdentityCheck, now: InputIdentity): Promise<void> {
  if (check.allowUnsafe === true) return;
  const file = coveragePath(check.output);
  const saved = (await readCoverageFile(file))?.input_identity;
  if (saved === undefined || saved === null) return;
  const message = otherInputsMessage(saved, now, check, file);
  if (message !== null) throw new InputError(message);
}

/** The refusal for the first file whose digest differs from the saved one (null: none does). */
export function otherInputsMessage(saved: Partial<InputIdentity>, now: InputIdentity, check: IdentityCheck, file: string): string | null {
  const differs: Array<[string, string]> = [];
  if (typeof saved.inputs === 'string' && saved.inputs !== now.inputs) differs.push(['--inputs', check.inputsPath]);
  if (typeof saved.rollouts === 'string' && now.rollouts !== undefined && saved.rollouts !== now.rollouts)
    differs.push(['--rollouts', check.rolloutsPath]);
  if (differs.length === 0) return null;
  const [flag, path] = differs[0];
  return (
    `--resume: ${flag} '${path}' is not the file this run was started with (its rows differ from the digest saved in '${file}'): ` +
    `resume with the original file, write to another --output, or pass --allow-unsafe to resume with this one`
  );
}
