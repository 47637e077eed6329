/**
 * Messages about runs owned by newer NeMo Gym's run store (`rollouts.rollout_store`): its run lock
 * and its managed runs (a manifest or an attempts journal beside the results). The refusal texts
 * are NeMo Gym's own (newer `rollout_reverification`), so a user sees the same line from either tool.
 */

/** A held run lock (`rollout_recovery.run_lock`). */
export function runLockHeld(lockPath: string): string {
  return `Another collector owns this run (${lockPath}). Wait for it to stop before resuming.`;
}

/**
 * `--rollouts` or `--output` has a manifest or attempts journal beside it. NeMo Gym's text, then
 * how to make the projection it names with reverify (`reverify read` reads a managed run).
 */
export function managedRunRefused(which: '--rollouts' | '--output', companion: string, path: string): string {
  return (
    `${which} belongs to a NeMo Gym managed run (${companion}). Journal-backed reverification is a follow-up to ` +
    'evaluation resume. Resume collection to retry unfinished tasks from their inputs, or reverify a ' +
    'selected-result projection in a separate output. Saved artifacts were not changed. ' +
    `(Make the projection with \`reverify read -o ${path} --disposition success --skip-keys _ng_run_id > selected.jsonl\` and pass it as --rollouts.)`
  );
}

/** `--overwrite` on an output that a manifest or attempts journal backs. */
export function managedOverwriteRefused(companion: string): string {
  return `Cannot overwrite a journal-backed run with reverification; choose a new output path. (${companion} is beside it.)`;
}

/** A shard matched by `reverify aggregate --input-glob` belongs to a managed run. */
export function managedShardRefused(shard: string, companion: string): string {
  return (
    `${shard} belongs to a NeMo Gym managed run (${companion}): its rows include superseded attempts that only its manifest ` +
    `selects. Aggregate a selected-result projection of it instead (\`reverify read -o ${shard} --disposition success --skip-keys _ng_run_id > selected.jsonl\`), ` +
    'or leave it out of --input-glob. Nothing was written.'
  );
}

/** An output (or its sidecar) whose rows carry a managed run's `_ng_run_id` has no manifest beside it (newer NeMo Gym's wording). */
export function runTaggedWithoutManifest(file: string, lineNo: number): string {
  return `Run-tagged outcomes have lost their manifest. Restore it from backup or use a new output path. (${file}:${lineNo} is stamped _ng_run_id and no manifest is beside it.)`;
}
