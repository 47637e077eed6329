import { existsSync } from 'node:fs';
import { FAILURE_CLASS_KEY, FAILURE_TERMINAL_KEY, OMITTED_KEY } from '../contract/keys.js';
import { InputError } from '../contract/errors.js';
import { topLevelSpans } from '../contract/json-spans.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { isTerminalFailure, type RetryRules } from '../contract/retry-rules.js';
import { lineKeyId } from '../contract/row-key.js';
import { isBlank, jsonlLines, type JsonlLine } from '../io/jsonl-lines.js';

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

/** The key ids of a main output's lines, in file order (keyless lines left out); streams. */
export async function* outputKeyIds(path: string, policy: TailPolicy): AsyncGenerator<string> {
  if (!existsSync(path)) return;
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text)) continue;
    const id = keyOfOutputLine(path, line, policy);
    if (id !== null && id !== SKIP) yield id;
  }
}

/** One sidecar row: its key id, whether it stops retries, and whether it is an omission (not an attempt). */
export interface SidecarAttempt {
  id: string;
  terminal: boolean;
  omitted: boolean;
}

/**
 * The attempts a sidecar records, in file order (keyless lines left out); streams. Whether an
 * attempt is terminal follows the retry rules (`isTerminalFailure`: `--retry-terminal-timeouts`);
 * an omission (`_ng_omitted`) always is.
 */
export async function* sidecarAttemptLines(path: string, policy: TailPolicy & RetryRules): AsyncGenerator<SidecarAttempt> {
  if (!existsSync(path)) return;
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text)) continue;
    const id = keyOfOutputLine(path, line, policy);
    if (id === null || id === SKIP) continue;
    const spans = topLevelSpans(line.text);
    const raw = (key: string) => {
      const span = spans.get(key);
      return span === undefined ? undefined : line.text.slice(span.start, span.end);
    };
    const stamped = rawTruthy(raw(FAILURE_TERMINAL_KEY) ?? 'null');
    // An omission is terminal whatever else it says: it is never retried.
    const omitted = rawTruthy(raw(OMITTED_KEY) ?? 'null');
    // The class is read only when it can matter (parsing it for every line of a big sidecar is waste).
    const failureClass = policy.retryTerminalTimeouts ? (JSON.parse(raw(FAILURE_CLASS_KEY) ?? 'null') as unknown) : undefined;
    yield { id, terminal: omitted || isTerminalFailure(failureClass, stamped, policy), omitted };
  }
}
