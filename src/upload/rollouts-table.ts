/**
 * Writes the `rollouts.json` table of a main output to a file, in flat memory: every row's place
 * (key, offset, length) goes into an external sort by key (spec §4.11: NeMo Gym exports the rows
 * sorted by (task, rollout)); the sorted rows are then read back a window at a time, sanitised
 * (`sanitize-row.ts`) and written to the table file (or one per line, for W&B). Blank lines are skipped.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { InputError } from '../contract/errors.js';
import { compareKeys, keyWithNullDefaults, type RowKey } from '../contract/row-key.js';
import { ExternalSorter, type RecordCodec } from '../io/external-sort.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';
import { readRanges } from '../io/read-ranges.js';
import { readRowKey, rowKeySize, writeRowKey } from '../io/row-key-codec.js';
import { sanitizeForExport } from './sanitize-row.js';
import { TABLE_HEAD, TABLE_TAIL, tableRow } from './table-json.js';
import { malformedJsonLine } from '../contract/line-errors.js';

interface RowPlace {
  key: RowKey;
  offset: number;
  length: number;
}

const placeCodec: RecordCodec<RowPlace> = {
  size: (r) => 12 + rowKeySize(r.key),
  write(r, buf, at) {
    buf.writeDoubleLE(r.offset, at);
    buf.writeUInt32LE(r.length, at + 8);
    writeRowKey(r.key, buf, at + 12);
  },
  read(buf, at) {
    return { offset: buf.readDoubleLE(at), length: buf.readUInt32LE(at + 8), key: readRowKey(buf, at + 12)[0] };
  },
};

/** How the rows are written: the pandas table of `rollouts.json` (the default), or one row per line. */
export interface TableFormat {
  head: string;
  row: (rowJson: string, index: number) => string;
  tail: string;
}

export const PANDAS_TABLE: TableFormat = { head: TABLE_HEAD, row: tableRow, tail: TABLE_TAIL };
/** One exported row per line (the W&B upload reads them back as the cells of its table). */
export const ROW_LINES: TableFormat = { head: '', row: (json) => `${json}\n`, tail: '' };

/** Rows read back at once. */
const WINDOW_ROWS = 1000;

async function writeChunk(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/**
 * Writes the table of `output`'s rows to `tablePath` (created), using `scratchDir` for the sort;
 * returns the number of rows. A line that is not a JSON object is an `InputError` naming it.
 */
export async function writeRolloutsTable(
  output: string,
  tablePath: string,
  scratchDir: string,
  opts: { maxRecords?: number; onRows?: (n: number) => void; format?: TableFormat } = {},
): Promise<number> {
  const sorter = new ExternalSorter<RowPlace>({
    dir: scratchDir,
    name: 'rollouts',
    compare: (a, b) => compareKeys(a.key, b.key),
    codec: placeCodec,
    maxRecords: opts.maxRecords,
  });
  for await (const line of jsonlLines(output)) {
    if (isBlank(line.text)) continue;
    let row: unknown;
    try {
      row = JSON.parse(line.text);
    } catch (err) {
      throw malformedJsonLine(output, line.lineNo, line.text, err, ', then run `reverify upload`');
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw new InputError(`${output}:${line.lineNo}: a row must be a JSON object`);
    await sorter.add({ key: keyWithNullDefaults(row as Record<string, unknown>), offset: line.offset, length: line.length });
  }
  const format = opts.format ?? PANDAS_TABLE;
  const out = createWriteStream(tablePath);
  let n = 0;
  try {
    await writeChunk(out, format.head);
    let window: RowPlace[] = [];
    const flush = async () => {
      const texts = await readRanges(output, window);
      for (const text of texts) await writeChunk(out, format.row(sanitizeForExport(text), n++));
      window = [];
      opts.onRows?.(n);
    };
    for await (const place of sorter.sorted()) {
      window.push(place);
      if (window.length >= WINDOW_ROWS) await flush();
    }
    if (window.length > 0) await flush();
    await writeChunk(out, format.tail);
  } finally {
    out.end();
    await once(out, 'close');
  }
  return n;
}
