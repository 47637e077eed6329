/**
 * The selection of a managed run's index (newer NeMo Gym's `RolloutRecords.disposition`,
 * `selected_records`; policy `latest_allocated`): a rollout's latest allocated attempt decides.
 * Its saved outcome is selected: `success`, `failure`, or `omitted` (an `_ng_omitted` row, or a
 * terminal `skipped` one); an attempt allocated but not saved is `unknown` (its outcome was lost,
 * e.g. the collector died mid-attempt), and every earlier attempt's row is superseded, also a saved
 * answer. A rollout with no attempt allocated was never dispatched.
 */
import type { Disposition } from '../contract/outcome-selection.js';
import { isTerminalFailure } from '../contract/retry-rules.js';
import { savedKey, type ManagedIndex, type SavedRecord } from './managed-index.js';
import { rawSelectedFor, type SelectionSummary } from './selection-summary.js';

export interface SelectedRecord {
  identity: string;
  attempt: number;
  disposition: Disposition;
  record: SavedRecord;
}

/** The rollout's disposition, or null when no attempt was ever allocated for it. */
export function dispositionOf(ix: ManagedIndex, identity: string): Disposition | null {
  const attempt = ix.latest.get(identity);
  if (attempt === undefined) return null;
  return ix.saved.get(savedKey(identity, attempt))?.disposition ?? 'unknown';
}

/** The selected records of the wanted dispositions, in materialized order (`unknown` has none: nothing is saved). */
export function selectedRecords(ix: ManagedIndex, want: ReadonlySet<Disposition>): SelectedRecord[] {
  const out: SelectedRecord[] = [];
  for (const identity of ix.expected) {
    const attempt = ix.latest.get(identity);
    if (attempt === undefined) continue;
    const record = ix.saved.get(savedKey(identity, attempt));
    if (record !== undefined && want.has(record.disposition)) out.push({ identity, attempt, disposition: record.disposition, record });
  }
  return out;
}

/** The read's summary; `retryTerminalTimeouts` applies to a legacy run read without a manifest only. */
export function managedSummary(
  ix: ManagedIndex,
  opts: { retryTerminalTimeouts: boolean; artifacts?: readonly string[] },
): SelectionSummary {
  // A manifest keeps its saved policy; a legacy import (no manifest file: no run id) takes the option.
  const policy = ix.manifest.runId === null ? opts.retryTerminalTimeouts : ix.manifest.retryTerminalTimeouts;
  const counts: Record<Disposition, number> = { success: 0, failure: 0, omitted: 0, unknown: 0 };
  let neverDispatched = 0;
  let terminalFailures = 0;
  const selectedIn = { main: 0, sidecar: 0 };
  for (const identity of ix.expected) {
    const d = dispositionOf(ix, identity);
    if (d === null) {
      neverDispatched++;
      continue;
    }
    counts[d]++;
    const record = ix.saved.get(savedKey(identity, ix.latest.get(identity)!));
    if (record === undefined) continue;
    // Only the record saved last for its key is selected (an identical duplicate line is superseded).
    selectedIn[record.file]++;
    if (d === 'failure' && isTerminalFailure(record.failureClass, record.terminal, { retryTerminalTimeouts: policy })) terminalFailures++;
  }
  const perFile = ix.files.map((f) => ({ path: f.path, rows: f.records, selected: selectedIn[f.file], cutOff: f.cutOff }));
  const rows = perFile.reduce((n, f) => n + f.rows, 0);
  const selected = perFile.reduce((n, f) => n + f.selected, 0);
  return {
    counts,
    superseded: rows - selected,
    rawOutcomesAreSelected: rawSelectedFor(perFile, opts.artifacts),
    files: ix.files.map((f) => f.path),
    cutOff: ix.files.filter((f) => f.cutOff).map((f) => f.path),
    perFile,
    terminalFailures,
    managed: { runId: ix.manifest.runId, neverDispatched, legacyImport: ix.manifest.legacyImport, retryTerminalTimeouts: policy },
  };
}
