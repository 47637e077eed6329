import { existsSync } from 'node:fs';
import { FAILURE_TERMINAL_KEY } from '../contract/keys.js';
import { InputError } from '../contract/errors.js';
import { topLevelSpans } from '../contract/json-spans.js';
import { rawTruthy } from '../contract/python-truthiness.js';
import { lineKeyId } from '../contract/row-key.js';
import { isBlank, jsonlLines, type JsonlLine } from './jsonl-lines.js';

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

/**
 * The keys of one line of an output file, or null for a keyless line; a malformed line is an error
 * naming `file:line` — unless it is the cut-off last line, which the policy decides about.
 */
function keyOfOutputLine(path: string, line: JsonlLine, policy: TailPolicy): string | null | 'skip' {
  if (!line.terminated) {
    try {
      JSON.parse(line.text);
    } catch {
      if (policy.repairTruncated) return 'skip';
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
    if (id !== null && id !== 'skip') yield id;
  }
}

/** The keys present in a main output (spec §4.8 `successful_keys`, §4.6 present-set). */
export async function readOutputKeys(path: string, policy: TailPolicy): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const id of outputKeyIds(path, policy)) keys.add(id);
  return keys;
}

/** One failed attempt recorded in a sidecar: its key id, and whether it was terminal. */
export interface SidecarAttempt {
  id: string;
  terminal: boolean;
}

/** The attempts a sidecar records, in file order (keyless lines left out); streams. */
export async function* sidecarAttemptLines(path: string, policy: TailPolicy): AsyncGenerator<SidecarAttempt> {
  if (!existsSync(path)) return;
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text)) continue;
    const id = keyOfOutputLine(path, line, policy);
    if (id === null || id === 'skip') continue;
    const span = topLevelSpans(line.text).get(FAILURE_TERMINAL_KEY);
    yield { id, terminal: span !== undefined && rawTruthy(line.text.slice(span.start, span.end)) };
  }
}

/** Failed attempts per key and the keys with a terminal failure, from a sidecar (spec §4.8). */
export interface SidecarAttempts {
  attempts: Map<string, number>;
  terminal: Set<string>;
}

export async function readSidecarAttempts(path: string, policy: TailPolicy): Promise<SidecarAttempts> {
  const attempts = new Map<string, number>();
  const terminal = new Set<string>();
  for await (const a of sidecarAttemptLines(path, policy)) {
    attempts.set(a.id, (attempts.get(a.id) ?? 0) + 1);
    if (a.terminal) terminal.add(a.id);
  }
  return { attempts, terminal };
}

/** The resume cache of spec §4.8: what `--resume` skips. */
export interface ResumeCache {
  /** False when neither the output nor its sidecar exists ("Skipping resume_from_cache ..."). */
  found: boolean;
  successful: Set<string>;
  terminal: Set<string>;
  maxedOut: Set<string>;
}

export async function readResumeCache(output: string, sidecar: string, maxAttempts: number, policy: TailPolicy): Promise<ResumeCache> {
  const found = existsSync(output) || existsSync(sidecar);
  const successful = await readOutputKeys(output, policy);
  const { attempts, terminal } = await readSidecarAttempts(sidecar, policy);
  const maxedOut = new Set([...attempts].filter(([, n]) => n >= maxAttempts).map(([k]) => k));
  return { found, successful, terminal, maxedOut };
}

/** Why `--resume` skips a key, or null if it must run (checked in this order). */
export function resumeSkipReason(cache: ResumeCache, id: string): 'done' | 'terminal' | 'maxed' | null {
  if (cache.successful.has(id)) return 'done';
  if (cache.terminal.has(id)) return 'terminal';
  if (cache.maxedOut.has(id)) return 'maxed';
  return null;
}
