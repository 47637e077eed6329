/**
 * Which saved outcome of a rollout counts (newer NeMo Gym's `RolloutStore.selected` /
 * `disposition`), for a plain run: one without a manifest, whose files hold no attempt numbers.
 * A rollout with a row in the main output is a `success` (its sidecar rows are superseded by it);
 * otherwise its latest sidecar row is selected: `omitted` when stamped `_ng_omitted` (an intentional
 * omission), else `failure`, and its earlier sidecar rows are superseded. `unknown` (an attempt
 * allocated whose outcome is not saved) needs a manifest's allocations: a plain run has none.
 */

export const DISPOSITIONS = ['success', 'failure', 'omitted', 'unknown'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

/** One saved row of a rollout: which file, its place in that file, whether it is an omission. */
export interface SavedRow {
  file: 'main' | 'sidecar';
  /** Line number in its file (order of writing). */
  lineNo: number;
  omitted: boolean;
}

export interface Selected {
  row: SavedRow;
  disposition: Disposition;
}

/** The selected rows of one rollout's saved rows (any order); the others are superseded. */
export function selectRows(rows: readonly SavedRow[]): Selected[] {
  const main = rows.filter((r) => r.file === 'main');
  // Every main row counts: reverify and NeMo Gym write one per rollout; a duplicate is not ours to drop.
  if (main.length > 0) return main.map((row) => ({ row, disposition: 'success' }));
  let latest: SavedRow | undefined;
  for (const r of rows) if (latest === undefined || r.lineNo > latest.lineNo) latest = r;
  if (latest === undefined) return [];
  return [{ row: latest, disposition: latest.omitted ? 'omitted' : 'failure' }];
}
