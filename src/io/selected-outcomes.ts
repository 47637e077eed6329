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
import { FAILURE_CLASS_KEY, FAILURE_TERMINAL_KEY, OMITTED_KEY } from '../contract/keys.js';
import { rawField, topLevelSpans } from '../contract/json-spans.js';
import { managedRowFacts } from '../contract/managed-row.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { selectRows, type Disposition, type SavedRow } from '../contract/outcome-selection.js';
import { isTerminalFailure } from '../contract/retry-rules.js';
import { compareCodePoints, lineKeyId } from '../contract/row-key.js';
import { ExternalSorter, groupsOf, type RecordCodec } from './external-sort.js';
import { exists } from './file-exists.js';
import { isBlank, jsonlLines, type JsonlLine } from './jsonl-lines.js';
import { readString, stringSize, writeString } from './row-key-codec.js';
import type { ReadRequest, SelectedOutcome } from './managed-read.js';
import { withScratchDir } from './scratch-dir.js';
import { rawSelectedFor, type SelectionSummary } from './selection-summary.js';

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

/** Identity and attempt of a plain run's row, for metadata output (null when it has no valid identity). */
function identityOf(text: string): { identity: string | null; attempt: number | null } {
  try {
    const f = managedRowFacts(text);
    return { identity: f.identity, attempt: f.attempt ?? 0 };
  } catch {
    return { identity: null, attempt: null };
  }
}

function outcomeOf(line: JsonlLine, path: string, disposition: Disposition, rows: boolean): SelectedOutcome {
  const id = rows ? { identity: null, attempt: null } : identityOf(line.text);
  const length = line.rawLength + (line.terminated ? 1 : 0);
  return { ...id, disposition, path, lineNo: line.lineNo, offset: line.offset, length, text: rows ? line.text : null };
}

/** Whether a selected sidecar failure is terminal under the read's timeout policy. */
function terminalUnder(text: string, retryTerminalTimeouts: boolean): boolean {
  const spans = topLevelSpans(text);
  const raw = (k: string) => (spans.has(k) ? text.slice(spans.get(k)!.start, spans.get(k)!.end) : 'null');
  return isTerminalFailure(JSON.parse(raw(FAILURE_CLASS_KEY)), rawTruthy(raw(FAILURE_TERMINAL_KEY)), { retryTerminalTimeouts });
}

type PlainRequest = Pick<ReadRequest, 'want' | 'artifacts'> & Partial<Pick<ReadRequest, 'rows' | 'retryTerminalTimeouts'>>;

/** Emits the wanted selected outcomes (main rows, then the selected sidecar rows, in file order) and returns the summary. */
export async function readSelectedOutcomes(
  paths: { output: string; sidecar: string },
  req: PlainRequest,
  emit: (o: SelectedOutcome) => void | Promise<void>,
  opts: { maxRecords?: number } = {},
): Promise<SelectionSummary> {
  const rows = req.rows ?? true;
  return withScratchDir(tmpdir(), 'reverify-read-', async (dir) => {
    const byKey = new ExternalSorter<Rec>({
      dir,
      name: 'keys',
      codec: recCodec,
      maxRecords: opts.maxRecords,
      compare: (a, b) => compareCodePoints(a.id, b.id) || (a.file === b.file ? 0 : a.file === 'main' ? -1 : 1) || a.lineNo - b.lineNo,
    });
    const perFile = new Map<SavedRow['file'], { path: string; rows: number; selected: number; cutOff: boolean }>();
    for (const [file, path] of [
      ['main', paths.output],
      ['sidecar', paths.sidecar],
    ] as const) {
      if (!(await exists(path))) continue;
      const f = { path, rows: 0, selected: 0, cutOff: false };
      perFile.set(file, f);
      for await (const r of savedRows(path, file, () => (f.cutOff = true))) {
        f.rows++;
        await byKey.add(r);
      }
    }
    const picks = new ExternalSorter<{ lineNo: number; omitted: boolean }>({
      dir,
      name: 'picks',
      codec: pickCodec,
      maxRecords: opts.maxRecords,
      compare: (a, b) => a.lineNo - b.lineNo,
    });
    const counts: Record<Disposition, number> = { success: 0, failure: 0, omitted: 0, unknown: 0 };
    for await (const group of groupsOf(byKey.sorted(), (r) => r.id)) {
      for (const s of selectRows(group)) {
        counts[s.disposition]++;
        perFile.get(s.row.file)!.selected++;
        if (s.row.file === 'sidecar') await picks.add({ lineNo: s.row.lineNo, omitted: s.row.omitted });
      }
    }
    if (req.want.has('success') && perFile.has('main'))
      for await (const line of jsonlLines(paths.output))
        if (line.terminated && !isBlank(line.text)) await emit(outcomeOf(line, paths.output, 'success', rows));
    let terminalFailures = 0;
    if (picks.count > 0) {
      const next = picks.sorted()[Symbol.asyncIterator]();
      let pick = await next.next();
      for await (const line of jsonlLines(paths.sidecar)) {
        if (pick.done) break;
        if (line.lineNo !== pick.value.lineNo) continue;
        const disposition: Disposition = pick.value.omitted ? 'omitted' : 'failure';
        if (disposition === 'failure' && terminalUnder(line.text, req.retryTerminalTimeouts === true)) terminalFailures++;
        if (req.want.has(disposition)) await emit(outcomeOf(line, paths.sidecar, disposition, rows));
        pick = await next.next();
      }
      await next.return?.(undefined);
    }
    const files = [...perFile.values()];
    const selected = files.reduce((n, f) => n + f.selected, 0);
    return {
      counts,
      superseded: byKey.count - selected,
      rawOutcomesAreSelected: rawSelectedFor(files, req.artifacts),
      files: files.map((f) => f.path),
      cutOff: files.filter((f) => f.cutOff).map((f) => f.path),
      perFile: files,
      terminalFailures,
    };
  });
}
