/** ATIF runs for tests: a sample run's inputs, its rollouts as ATIF trajectories and their manifest, and edits of them. */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtifSample } from '../../src/demo/atif-sample.js';
import { sampleRun } from './run-fixtures.js';

export const ATIF_FIXTURES = join(import.meta.dirname, '../fixtures/atif');

export type AtifRun = Awaited<ReturnType<typeof sampleRun>> & { atifDir: string; manifestPath: string };

/** Sample data (sampleRun) with every rollout written as an ATIF trajectory under `<dir>/atif`, and its manifest. */
export async function atifRun(dir: string, port: number, opts: { tasks?: number; repeats?: number } = {}): Promise<AtifRun> {
  const d = await sampleRun(dir, port, opts);
  const atifDir = join(dir, 'atif');
  const { manifestPath } = await writeAtifSample(atifDir, d.rolloutsPath);
  return { ...d, atifDir, manifestPath };
}

/** `reverify run` options of an ATIF run (plus `extra`). */
export function atifOptions(d: AtifRun, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    inputFormat: 'atif',
    atifManifest: d.manifestPath,
    inputs: d.inputsPath,
    output: d.output,
    configs: [d.config],
    maxAttempts: 1,
    ...extra,
  };
}

type Entry = { trajectory_path: string; _ng_task_index: number; _ng_rollout_index: number; expected_sha256?: string | null };

/** The manifest's entries, in order. */
export function manifestEntries(d: AtifRun): Entry[] {
  return readFileSync(d.manifestPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);
}

/** Rewrites the manifest with `edit` applied to each entry (return null to drop it). */
export function editManifest(d: AtifRun, edit: (e: Entry, i: number) => Entry | null): void {
  const lines = manifestEntries(d)
    .map(edit)
    .filter((e): e is Entry => e !== null)
    .map((e) => JSON.stringify(e));
  writeFileSync(d.manifestPath, lines.join('\n') + '\n');
}

/** Points the manifest entry of `key` at a copy of the fixture `fixture` (test/fixtures/atif/...), unpinned; returns its 1-based line. */
export function useFixture(d: AtifRun, key: [number, number], fixture: string): number {
  const name = `fixture-${fixture.replace(/\//g, '_')}`;
  copyFileSync(join(ATIF_FIXTURES, fixture), join(d.atifDir, name));
  let line = 0;
  editManifest(d, (e, i) => {
    if (e._ng_task_index !== key[0] || e._ng_rollout_index !== key[1]) return e;
    line = i + 1;
    return { ...e, trajectory_path: name, expected_sha256: null };
  });
  return line;
}

/** Names of the files in `dir`, sorted. */
export function filesIn(dir: string): string[] {
  return readdirSync(dir).sort();
}
