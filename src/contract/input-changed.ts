/** The message of a run that finds an input file changed after it planned it (ours: NeMo Gym never checks). */

/** What a file is now, or null when it is gone. */
export interface FileNow {
  size: number;
  mtimeMs: number;
}

/**
 * Ours (NeMo Gym reads its inputs once and never checks): a row the plan placed is no longer
 * there — the file was edited, replaced, truncated or reordered after the run planned it.
 * `where` names the row (`line 151`, or `the materialized input of rollouts.jsonl:151`). The way
 * on is `--resume`, except for an ATIF run (`atif`), which cannot be resumed: `--overwrite`.
 */
export function inputChanged(
  path: string,
  where: string,
  planned: { size: number; mtimeMs: number } | undefined,
  now: FileNow | null,
  atif = false,
): string {
  const stamp = (ms: number) => new Date(ms).toISOString();
  let what = '';
  if (now === null) what = ' (the file is gone)';
  else if (planned) {
    const changes: string[] = [];
    if (planned.size !== now.size) changes.push(`size ${planned.size} -> ${now.size} bytes`);
    if (planned.mtimeMs !== now.mtimeMs) changes.push(`modified ${stamp(planned.mtimeMs)} -> ${stamp(now.mtimeMs)}`);
    if (changes.length > 0) what = ` (${changes.join(', ')})`;
  }
  return (
    `'${path}' changed after this run planned it: ${where} is not the row that was planned${what}. ` +
    'Nothing wrong was written and the rows committed so far are kept. ' +
    (atif
      ? 'Restore the file (or keep the new one), then run the same command with --overwrite (an ATIF run cannot be resumed): it verifies every trajectory again from the files as they are now.'
      : 'Restore the file (or keep the new one), then run the same command with --resume: it plans again from the files as they are now.')
  );
}
