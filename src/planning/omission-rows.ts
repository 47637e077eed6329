/**
 * The rows of the run store's `record_omission(row, reason)` for a plain run: for each chosen key,
 * its row of `--rollouts` with `_ng_failure_class: "skipped"`, `_ng_failure_terminal: true`,
 * `_ng_omitted: true` and the reason as `_ng_failure_message` (its first 2000 characters), a sidecar
 * row every reader counts as intentionally omitted: never retried, never aggregated. A key that is
 * not in `--rollouts`, already scored, or already omitted is refused with one line. The files are
 * streamed; memory holds the chosen keys and their rows.
 */
import { ConfigError } from '../contract/errors.js';
import { setFields } from '../contract/json-spans.js';
import { FAILURE_CLASS_KEY, FAILURE_MESSAGE_KEY, FAILURE_TERMINAL_KEY, OMITTED_KEY, SKIPPED_CLASS } from '../contract/keys.js';
import { lineKeyId } from '../contract/row-key.js';
import { jsonlLines } from '../io/jsonl-lines.js';
import { outputKeyIds, sidecarAttemptLines } from './output-cache.js';
import { keyIdText } from './selected-rows.js';

/** Characters of the reason kept in the row (NeMo Gym's `reason[:2000]`). */
export const REASON_CHARS = 2000;

/** Which rollouts to omit: key ids (`keyId`), or every rollout of these task part ids. */
export type OmitChoice = { keys: readonly string[] } | { tasks: readonly string[] };

export interface OmissionRequest {
  rollouts: string;
  output: string;
  sidecar: string;
  choice: OmitChoice;
  reason: string;
  /** Keys an interrupted `omit` just finished omitting: left out, not refused (a retried command is done). */
  finished?: ReadonlySet<string>;
}

function omissionRow(line: string, reason: string): string {
  return setFields(line, [
    [FAILURE_CLASS_KEY, JSON.stringify(SKIPPED_CLASS)],
    [FAILURE_TERMINAL_KEY, 'true'],
    [OMITTED_KEY, 'true'],
    [FAILURE_MESSAGE_KEY, JSON.stringify(reason.slice(0, REASON_CHARS))],
  ]);
}

/** The chosen rows of `--rollouts`, by key id, in file order (the first row of a key). */
async function chosenRows(req: OmissionRequest): Promise<Map<string, string>> {
  const keys = 'keys' in req.choice ? new Set(req.choice.keys) : null;
  const tasks = 'tasks' in req.choice ? new Set(req.choice.tasks) : null;
  const rows = new Map<string, string>();
  for await (const line of jsonlLines(req.rollouts)) {
    if (line.text.trim() === '') continue;
    let id: string | null;
    try {
      id = lineKeyId(line.text);
    } catch {
      throw new ConfigError(`omit: ${req.rollouts}:${line.lineNo} is not a JSON object: give the run's --rollouts`);
    }
    if (id === null || rows.has(id)) continue;
    const task = (JSON.parse(id) as [string, string])[0];
    if (keys?.has(id) || tasks?.has(task)) rows.set(id, omissionRow(line.text, req.reason));
  }
  const seen = new Set([...rows.keys()].map((id) => (JSON.parse(id) as [string, string])[0]));
  const missing = keys ? [...keys].filter((k) => !rows.has(k)).map(keyIdText) : [...tasks!].filter((t) => !seen.has(t));
  if (missing.length > 0)
    throw new ConfigError(
      `omit: ${keys ? 'key' : 'task'} ${missing[0]} is not in ${req.rollouts}${missing.length > 1 ? ` (nor ${missing.length - 1} more)` : ''}: name rollouts of the run's --rollouts (TASK:ROLLOUT)`,
    );
  return rows;
}

/** Refuses a chosen key already scored or already omitted. */
async function refuseRecorded(req: OmissionRequest, rows: Map<string, string>): Promise<void> {
  const tail = { repairTruncated: false };
  for await (const id of outputKeyIds(req.output, tail))
    if (rows.has(id))
      throw new ConfigError(
        `omit: key ${keyIdText(id)} is already scored (${req.output} has its row): an outcome is never omitted; leave it out of the keys`,
      );
  for await (const a of sidecarAttemptLines(req.sidecar, { ...tail, retryTerminalTimeouts: false }))
    if (a.omitted && rows.has(a.id))
      throw new ConfigError(
        `omit: key ${keyIdText(a.id)} is already omitted (${req.sidecar} has its omission row): leave it out of the keys`,
      );
}

/** The omission rows to append (each ending in `\n`), and their key ids and keys as `T:R`; throws the first refusal. */
export async function omissionRows(req: OmissionRequest): Promise<{ text: string; ids: string[]; keys: string[] }> {
  const rows = await chosenRows(req);
  for (const id of req.finished ?? []) rows.delete(id);
  await refuseRecorded(req, rows);
  const ids = [...rows.keys()];
  return { text: [...rows.values()].map((r) => r + '\n').join(''), ids, keys: ids.map(keyIdText) };
}
