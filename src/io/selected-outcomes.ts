/**
 * Reads the selected outcomes of a plain run (src/contract/outcome-selection.ts) from its main
 * output and sidecar, without writing beside them or locking anything, in bounded memory: the
 * rows' keys are joined by an external sort in a private scratch directory (removed after), and
 * the rows themselves are streamed from the files, verbatim, in file order (main rows, then the
 * selected sidecar rows). A last line without its newline (a write in progress or cut off) is not
 * an outcome yet and is skipped, as NeMo Gym's readers skip it.
 */
import { tmpdir } from 'node:os';
import { ConfigError } from '../contract/errors.js';
import { OMITTED_KEY } from '../contract/keys.js';
import { rawField } from '../contract/json-spans.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { selectRows, type Disposition, type SavedRow } from '../contract/outcome-selection.js';
import { compareCodePoints, lineKeyId } from '../contract/row-key.js';
import { ExternalSorter, groupsOf, type RecordCodec } from './external-sort.js';
import { exists } from './file-exists.js';
import { isBlank, jsonlLines } from './jsonl-lines.js';
import { readString, stringSize, writeString } from './row-key-codec.js';
import { withScratchDir } from './scratch-dir.js';

export interface SelectionSummary {
  counts: Record<Disposition, number>;
  /** Saved rows no disposition selects (superseded by a later row of their rollout). */
  superseded: number;
  /** NeMo Gym's `raw_outcomes_are_selected`: every saved row is selected and every line whole, so a plain reader needs no filter. */
  rawOutcomesAreSelected: boolean;
  /** The run's files that exist (the sidecar may not). */
  files: string[];
  /** Files whose last line is cut off (an interrupted write): not a row, and a plain reader would fail on it. */
  cutOff: string[];
}

interface Rec extends SavedRow {
  id: string;
}

const FILES = ['main', 'sidecar'] as const;

const recCodec: RecordCodec<Rec> = {
  size: (r) => stringSize(r.id) + 10,
  write(r, buf, at) {
    const p = writeString(r.id, buf, at);
    buf.writeUInt8(r.file === 'main' ? 0 : 1, p);
    buf.writeDoubleLE(r.lineNo, p + 1);
    buf.writeUInt8(r.omitted ? 1 : 0, p + 9);
  },
  read(buf, at) {
    const [id, p] = readString(buf, at);
    return { id, file: FILES[buf.readUInt8(p)], lineNo: buf.readDoubleLE(p + 1), omitted: buf.readUInt8(p + 9) === 1 };
  },
};

/** A selected sidecar row: its line and disposition. */
const pickCodec: RecordCodec<{ lineNo: number; omitted: boolean }> = {
  size: () => 9,
  write(r, buf, at) {
    buf.writeDoubleLE(r.lineNo, at);
    buf.writeUInt8(r.omitted ? 1 : 0, at + 8);
  },
  read: (buf, at) => ({ lineNo: buf.readDoubleLE(at), omitted: buf.readUInt8(at + 8) === 1 }),
};

/** The saved rows of a file: each whole, non-blank line with its key id (or a unique id when keyless). */
async function* savedRows(path: string, file: SavedRow['file'], cutOff: () => void): AsyncGenerator<Rec> {
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text)) continue;
    if (!line.terminated) {
      cutOff();
      continue;
    }
    try {
      const id = lineKeyId(line.text) ?? `\u0000${file}:${line.lineNo}`;
      const omitted = file === 'sidecar' && rawTruthy(rawField(line.text, OMITTED_KEY) ?? 'null');
      yield { id, file, lineNo: line.lineNo, omitted };
    } catch {
      throw new ConfigError(`${path}:${line.lineNo}: not a JSON object; fix or remove that line to read the run`);
    }
  }
}

/** Emits the wanted selected rows (verbatim lines, without their newline) and returns the summary. */
export async function readSelectedOutcomes(
  paths: { output: string; sidecar: string },
  want: ReadonlySet<Disposition>,
  emit: (line: string) => void | Promise<void>,
  opts: { maxRecords?: number } = {},
): Promise<SelectionSummary> {
  return withScratchDir(tmpdir(), 'reverify-read-', async (dir) => {
    const byKey = new ExternalSorter<Rec>({
      dir,
      name: 'keys',
      codec: recCodec,
      maxRecords: opts.maxRecords,
      compare: (a, b) => compareCodePoints(a.id, b.id) || (a.file === b.file ? 0 : a.file === 'main' ? -1 : 1) || a.lineNo - b.lineNo,
    });
    const files: string[] = [];
    const cutOff: string[] = [];
    for (const [file, path] of [
      ['main', paths.output],
      ['sidecar', paths.sidecar],
    ] as const) {
      if (!(await exists(path))) continue;
      files.push(path);
      for await (const r of savedRows(path, file, () => cutOff.push(path))) await byKey.add(r);
    }
    const picks = new ExternalSorter<{ lineNo: number; omitted: boolean }>({
      dir,
      name: 'picks',
      codec: pickCodec,
      maxRecords: opts.maxRecords,
      compare: (a, b) => a.lineNo - b.lineNo,
    });
    const counts: Record<Disposition, number> = { success: 0, failure: 0, omitted: 0, unknown: 0 };
    let selected = 0;
    for await (const group of groupsOf(byKey.sorted(), (r) => r.id)) {
      for (const s of selectRows(group)) {
        counts[s.disposition]++;
        selected++;
        if (s.row.file === 'sidecar' && want.has(s.disposition)) await picks.add({ lineNo: s.row.lineNo, omitted: s.row.omitted });
      }
    }
    const total = byKey.count;
    if (want.has('success') && (await exists(paths.output)))
      for await (const line of jsonlLines(paths.output)) if (line.terminated && !isBlank(line.text)) await emit(line.text);
    if (picks.count > 0) {
      const next = picks.sorted()[Symbol.asyncIterator]();
      let pick = await next.next();
      for await (const line of jsonlLines(paths.sidecar)) {
        if (pick.done) break;
        if (line.lineNo !== pick.value.lineNo) continue;
        await emit(line.text);
        pick = await next.next();
      }
      await next.return?.(undefined);
    }
    return { counts, superseded: total - selected, rawOutcomesAreSelected: selected === total && cutOff.length === 0, files, cutOff };
  });
}
