/**
 * Reads a managed run's selected outcomes (newer NeMo Gym's `RolloutStore.read` then `selected` /
 * `selected_records`): indexes it (managed-index.ts), then reads each selected row from its byte
 * slice, in materialized order. Nothing is written or locked. Memory holds the index (a few numbers
 * per saved row, as NeMo Gym's reader does), never the rows.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Disposition } from '../contract/outcome-selection.js';
import type { RunManifest } from '../contract/run-manifest.js';
import { indexManagedRun, type ManagedPaths } from './managed-index.js';
import { managedSummary, selectedRecords } from './managed-selection.js';
import type { SelectionSummary } from './selection-summary.js';

/** One selected outcome as a reader hands it out: its place, and its row unless only metadata is wanted. */
export interface SelectedOutcome {
  identity: string | null;
  attempt: number | null;
  disposition: Disposition;
  path: string;
  lineNo: number;
  /** Byte offset and length of its line, the newline included. */
  offset: number;
  length: number;
  /** The row's text (without its newline); null when only metadata was asked for. */
  text: string | null;
}

export interface ReadRequest {
  want: ReadonlySet<Disposition>;
  /** Read the rows (false: metadata only, `selected_records`). */
  rows: boolean;
  importLegacy: boolean;
  retryTerminalTimeouts: boolean;
  artifacts?: readonly string[];
}

export async function readManagedRun(
  paths: ManagedPaths,
  manifest: RunManifest,
  req: ReadRequest,
  emit: (o: SelectedOutcome) => void | Promise<void>,
): Promise<SelectionSummary> {
  const ix = await indexManagedRun(paths, manifest, req.importLegacy);
  const summary = managedSummary(ix, req);
  const handles = new Map<string, FileHandle>();
  try {
    for (const s of selectedRecords(ix, req.want)) {
      const path = s.record.file === 'main' ? paths.output : paths.sidecar;
      let text: string | null = null;
      if (req.rows) {
        let fh = handles.get(path);
        if (fh === undefined) handles.set(path, (fh = await open(path, 'r')));
        const buf = Buffer.alloc(s.record.length);
        await fh.read(buf, 0, buf.length, s.record.offset);
        text = buf.toString('utf8').replace(/\r?\n$/, '');
      }
      const { lineNo, offset, length } = s.record;
      await emit({ identity: s.identity, attempt: s.attempt, disposition: s.disposition, path, lineNo, offset, length, text });
    }
  } finally {
    for (const fh of handles.values()) await fh.close();
  }
  return summary;
}
