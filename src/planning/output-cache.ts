import { existsSync } from 'node:fs';
import {
  FAILURE_CLASS_KEY,
  FAILURE_TERMINAL_KEY,
  MASK_SAMPLE_KEY,
  OMITTED_KEY,
  REWARD_KEY,
  ROLLOUT_INDEX_KEY,
  TASK_INDEX_KEY,
} from '../contract/keys.js';
import { InputError } from '../contract/errors.js';
import { topLevelSpans, type Span } from '../contract/json-spans.js';
import { measureOf, type Measure } from '../contract/measure.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { sidecarRowStops, type RetryRules } from '../contract/retry-rules.js';
import { lineKeyId } from '../contract/row-key.js';
import { MemberNames } from '../contract/json-line-scan.js';
import { isBlank, type JsonlLine, type LineChunk } from '../io/jsonl-lines.js';
import { scannedReads, type ScannedRead, type ScanOptions } from '../io/scan-ahead.js';
import { ScannedLine } from '../io/scanned-lines.js';
import { plainKeyId } from './fast-rows.js';
import { malformedJsonLine } from '../contract/line-errors.js';

/** How to treat an output whose last line was cut off (a crash in the middle of a write). */
export interface TailPolicy {
  /** Ignore a cut-off last line (`--repair-truncated`: the prepare phase then cuts it). */
  repairTruncated: boolean;
}

function cutOffMessage(path: string, lineNo: number): string {
  return (
    `${path}:${lineNo}: the last line is cut off (the writer crashed mid-line?). ` +
    'Delete that partial line, or pass --repair-truncated to cut it; it is not counted as done.'
  );
}

/** A cut-off last line that the policy leaves out. */
const SKIP = Symbol('skip');

/**
 * The key id of one line of an output file, null for a keyless line, or `SKIP`; a malformed line is
 * an error naming `file:line` — unless it is the cut-off last line, which the policy decides about.
 */
function keyOfOutputLine(path: string, line: JsonlLine, policy: TailPolicy): string | null | typeof SKIP {
  if (!line.terminated) {
    try {
      JSON.parse(line.text);
    } catch {
      if (policy.repairTruncated) return SKIP;
      throw new InputError(cutOffMessage(path, line.lineNo));
    }
  }
  try {
    return lineKeyId(line.text);
  } catch (err) {
    throw malformedJsonLine(path, line.lineNo, line.text, err);
  }
}

/**
 * Reads the keyed lines of an output file, one at a time (`keyAt`), with the raw texts of the
 * `wanted` top-level members (`raw`). A line the scanner vouches for with plain integer indices is
 * read from its bytes; any other takes the full path (`keyOfOutputLine`), which gives the same key,
 * or the same error, as before.
 */
class KeyedLineReader {
  private readonly scanned: ScannedLine;
  /** The text of the line just read when it took the full path, else null. */
  private text: string | null = null;
  private spans: Map<string, Span> | null = null;

  constructor(
    private readonly path: string,
    private readonly policy: TailPolicy,
    private readonly wanted: readonly string[],
  ) {
    this.scanned = new ScannedLine(new MemberNames(this.names));
  }

  /** The members scanned for. */
  get names(): readonly string[] {
    return [TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, ...this.wanted];
  }

  /**
   * The key id of line `k` of `chunk` (`read`: the thread's scan of the chunk, `scannedReads`), or
   * null for a blank or keyless line or a cut-off one left out.
   */
  keyAt(chunk: LineChunk, k: number, read: ScannedRead | null): string | null {
    const s = this.scanned;
    s.at(chunk, k, read);
    this.text = null;
    this.spans = null;
    const fast = s.vouched ? plainKeyId(s.data, s.slots) : null;
    if (fast !== null) return fast;
    const line = s.line();
    if (isBlank(line.text)) return null;
    const id = keyOfOutputLine(this.path, line, this.policy);
    if (id === null || id === SKIP) return null;
    this.text = line.text;
    return id;
  }

  /** Raw text of wanted member `i` of the line `keyAt` just keyed, or `undefined` when absent. */
  raw(i: number): string | undefined {
    if (this.text === null) return this.scanned.raw(i + 2);
    this.spans ??= topLevelSpans(this.text);
    const span = this.spans.get(this.wanted[i]);
    return span === undefined ? undefined : this.text.slice(span.start, span.end);
  }
}

/**
 * The key ids of a main output's lines, in file order (keyless lines left out), a read of the file
 * at a time (a 4 MiB read's lines: no promise per line); streams.
 */
export async function* outputKeyIdChunks(path: string, policy: TailPolicy, scan: ScanOptions = {}): AsyncGenerator<string[]> {
  if (!existsSync(path)) return;
  const reader = new KeyedLineReader(path, policy, []);
  for await (const { chunk, read } of scannedReads(path, reader.names, scan)) {
    const ids: string[] = [];
    for (let k = 0; k < chunk.count; k++) {
      const id = reader.keyAt(chunk, k, read);
      if (id !== null) ids.push(id);
    }
    yield ids;
  }
}

/** The key ids of a main output's lines with each row's `Measure`, a read of the file at a time; streams. */
export async function* outputMeasureChunks(
  path: string,
  policy: TailPolicy,
  scan: ScanOptions = {},
): AsyncGenerator<Array<{ id: string; measure: Measure }>> {
  if (!existsSync(path)) return;
  const reader = new KeyedLineReader(path, policy, [REWARD_KEY, MASK_SAMPLE_KEY]);
  for await (const { chunk, read } of scannedReads(path, reader.names, scan)) {
    const rows: Array<{ id: string; measure: Measure }> = [];
    for (let k = 0; k < chunk.count; k++) {
      const id = reader.keyAt(chunk, k, read);
      if (id !== null) rows.push({ id, measure: measureOf(reader.raw(0), reader.raw(1)) });
    }
    yield rows;
  }
}

/** The key ids of a main output's lines, in file order (keyless lines left out); streams. */
export async function* outputKeyIds(path: string, policy: TailPolicy): AsyncGenerator<string> {
  for await (const ids of outputKeyIdChunks(path, policy)) yield* ids;
}

/** One sidecar row: its key id, whether it stops retries, and whether it is an omission (not an attempt). */
export interface SidecarAttempt {
  id: string;
  terminal: boolean;
  omitted: boolean;
  /** Its `_ng_failure_class` as written (raw JSON text; absent member: `null`), parsed only by who counts classes. */
  failureClass: string;
}

/** The members `sidecarAttemptLines` reads, in `raw` order. */
const SIDECAR_MEMBERS = [FAILURE_TERMINAL_KEY, OMITTED_KEY, FAILURE_CLASS_KEY];

/**
 * The attempts a sidecar records, in file order (keyless lines left out), a read of the file at a
 * time; streams. Whether an attempt is terminal follows the retry rules (`sidecarRowStops`:
 * `--retry-terminal-timeouts`); an omission (`_ng_omitted`) always is.
 */
export async function* sidecarAttemptChunks(
  path: string,
  policy: TailPolicy & RetryRules,
  scan: ScanOptions = {},
): AsyncGenerator<SidecarAttempt[]> {
  if (!existsSync(path)) return;
  const reader = new KeyedLineReader(path, policy, SIDECAR_MEMBERS);
  for await (const { chunk, read } of scannedReads(path, reader.names, scan)) {
    const attempts: SidecarAttempt[] = [];
    for (let k = 0; k < chunk.count; k++) {
      const id = reader.keyAt(chunk, k, read);
      if (id === null) continue;
      const rawOmitted = reader.raw(1) ?? 'null';
      const rawClass = reader.raw(2) ?? 'null';
      const terminal = sidecarRowStops(reader.raw(0) ?? 'null', rawOmitted, rawClass, policy);
      attempts.push({ id, terminal, omitted: rawTruthy(rawOmitted), failureClass: rawClass });
    }
    yield attempts;
  }
}

/** `sidecarAttemptChunks` an attempt at a time; streams. */
export async function* sidecarAttemptLines(path: string, policy: TailPolicy & RetryRules): AsyncGenerator<SidecarAttempt> {
  for await (const attempts of sidecarAttemptChunks(path, policy)) yield* attempts;
}
