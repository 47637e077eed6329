/** The message of a run that finds an input file changed after it planned it (ours: NeMo Gym never checks). */
import { stampChanges, type FileStamp } from './file-stamp.js';

/**
 * Ours (NeMo Gym reads its inputs once and never checks): a row the plan placed is no longer
 * there — the file was edited, replaced, truncated or reordered after the run planned it; or
 * (`where` null) the file was written to since (its stamp differs), so none of its rows is read
 * again. `where` names the row (`line 151`, or `the materialized input of rollouts.jsonl:151`).
 * `planned`: the stamp the plan recorded (only the fields known: a trajectory's size). The way on
 * is `--resume`, except for an ATIF run (`atif`), which cannot be resumed: `--overwrite`.
 */
export function inputChanged(
  path: string,
  where: string | null,
  planned: Partial<FileStamp> | undefined,
  now: FileStamp | null,
  atif = false,
): string {
  let what = '';
  if (now === null) what = ' (the file is gone)';
  else if (planned) {
    const changes = stampChanges(planned, now);
    if (changes.length > 0) what = ` (${changes.join(', ')})`;
  }
  const head =
    where === null
      ? `'${path}' changed after this run planned it${what}: no row of it is read or sent any more. `
      : `'${path}' changed after this run planned it: ${where} is not the row that was planned${what}. `;
  return (
    head +
    'Nothing wrong was written and the rows committed so far are kept. ' +
    (atif
      ? 'Restore the file (or keep the new one), then run the same command with --overwrite (an ATIF run cannot be resumed): it verifies every trajectory again from the files as they are now.'
      : 'Restore the file, then run the same command with --resume; to go on with the file as it is now, add --allow-unsafe ' +
        '(the rows already written were verified against the file as it was): either plans again from the files as they are.')
  );
}
