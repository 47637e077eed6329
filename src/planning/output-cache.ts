import { existsSync } from 'node:fs';
import { FAILURE_CLASS_KEY, FAILURE_TERMINAL_KEY, OMITTED_KEY, ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { InputError } from '../contract/errors.js';
import { topLevelSpans } from '../contract/json-spans.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { isTerminalFailure, type RetryRules } from '../contract/retry-rules.js';
import { lineKeyId } from '../contract/row-key.js';
import { MemberNames } from '../io/json-line-scan.js';
import { isBlank, type JsonlLine } from '../io/jsonl-lines.js';
import { scannedLines } from '../io/scanned-lines.js';
import { plainKeyId } from './fast-rows.js';

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
    throw new InputError(`${path}:${line.lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line`);
  }
}

/** One keyed line of an output file: its key id, and the raw text of a wanted member (`undefined`: absent). */
interface KeyedLine {
  id: string;
  raw: (i: number) => string | undefined;
}

/**
 * The keyed lines of an output file in file order (keyless lines left out), with the raw texts of
 * the `wanted` top-level members; streams. A line the scanner vouches for with plain integer
 * indices is read from its bytes; any other takes the full path (`keyOfOutputLine`), which gives the
 * same key, or the error, as before.
 */
async function* keyedLines(path: string, policy: TailPolicy, wanted: readonly string[]): AsyncGenerator<KeyedLine> {
  if (!existsSync(path)) return;
  const names = new MemberNames([TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, ...wanted]);
  for await (const scanned of scannedLines(path, names)) {
    const fast = scanned.vouched ? plainKeyId(scanned.data, scanned.slots) : null;
    if (fast !== null) {
      yield { id: fast, raw: (i) => scanned.raw(i + 2) };
      continue;
    }
    const line = scanned.line();
    if (isBlank(line.text)) continue;
    const id = keyOfOutputLine(path, line, policy);
    if (id === null || id === SKIP) continue;
    let spans: ReturnType<typeof topLevelSpans> | undefined;
    yield {
      id,
      raw: (i) => {
        spans ??= topLevelSpans(line.text);
        const span = spans.get(wanted[i]);
        return span === undefined ? undefined : line.text.slice(span.start, span.end);
      },
    };
  }
}

/** The key ids of a main output's lines, in file order (keyless lines left out); streams. */
export async function* outputKeyIds(path: string, policy: TailPolicy): AsyncGenerator<string> {
  for await (const line of keyedLines(path, policy, [])) yield line.id;
}

/** One sidecar row: its key id, whether it stops retries, and whether it is an omission (not an attempt). */
export interface SidecarAttempt {
  id: string;
  terminal: boolean;
  omitted: boolean;
}

const SIDECAR_MEMBERS = [FAILURE_TERMINAL_KEY, OMITTED_KEY, FAILURE_CLASS_KEY];

/**
 * The attempts a sidecar records, in file order (keyless lines left out); streams. Whether an
 * attempt is terminal follows the retry rules (`isTerminalFailure`: `--retry-terminal-timeouts`);
 * an omission (`_ng_omitted`) always is.
 */
export async function* sidecarAttemptLines(path: string, policy: TailPolicy & RetryRules): AsyncGenerator<SidecarAttempt> {
  for await (const { id, raw } of keyedLines(path, policy, SIDECAR_MEMBERS)) {
    const stamped = rawTruthy(raw(0) ?? 'null');
    // An omission is terminal whatever else it says: it is never retried.
    const omitted = rawTruthy(raw(1) ?? 'null');
    // The class is read only when it can matter (parsing it for every line of a big sidecar is waste).
    const failureClass = policy.retryTerminalTimeouts ? (JSON.parse(raw(2) ?? 'null') as unknown) : undefined;
    yield { id, terminal: omitted || isTerminalFailure(failureClass, stamped, policy), omitted };
  }
}
