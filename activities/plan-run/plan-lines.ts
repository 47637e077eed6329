/** What the plan's passes share about lines: parsing one as a row, and remembering the first that stops the run. */
import { InputError } from '../../src/contract/errors.js';
import { malformedJsonLine, notUtf8Line } from '../../src/contract/line-errors.js';
import type { JsonlLine } from '../../src/io/jsonl-lines.js';
import type { ScanOptions } from '../../src/io/scan-ahead.js';

/**
 * How the plan's passes scan a big file (`scannedReads`): on two threads, the plan's thread none of
 * it, since its own work per line (keys, routes, the sort) is what bounds the plan.
 */
export const PLAN_SCAN: ScanOptions = { digests: true, threads: 2, callerScans: false };

/** One line as a row object, or the `file:line: reason` error that stops the run. */
export function parseLine(path: string, line: JsonlLine): Record<string, unknown> {
  const { lineNo, text } = line;
  if (!line.utf8) {
    throw notUtf8Line(path, lineNo);
  }
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (err) {
    throw malformedJsonLine(path, lineNo, text, err);
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new InputError(`${path}:${lineNo}: not a JSON object; every line must be one row object`);
  }
  return row as Record<string, unknown>;
}

/** The first row (in file order) that stops the run, of one kind. */
export class FirstAt<T> {
  ordinal = Infinity;
  value: T | undefined;
  offer(ordinal: number, value: T): void {
    if (ordinal < this.ordinal) {
      this.ordinal = ordinal;
      this.value = value;
    }
  }
}
