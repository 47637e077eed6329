/**
 * Indexes a NeMo Gym managed run (newer NeMo Gym's `RolloutRecords.load`), without writing or
 * locking: the logical rollouts of its materialized inputs (checked against the manifest's digest),
 * then every saved outcome of its sidecar and results, in that order, each by (identity, attempt)
 * with its line and byte slice. Only the rows' top-level fields are read. A row that does not fit
 * the manifest (another run's, an attempt never allocated, an outcome in the wrong file, two
 * different outcomes of one attempt) stops the read with one line naming file:line. With
 * `importLegacy`, rows without `_ng_run_id` are numbered in the order they were written (the
 * legacy import): a row without an attempt number gets the next one of its rollout.
 */
import { createHash } from 'node:crypto';
import { pyJsonDumps } from '../atif/py-json.js';
import { parseStrictJson } from '../atif/strict-json.js';
import { ConfigError } from '../contract/errors.js';
import { managedRowFacts, outcomeDisposition, type ManagedRowFacts } from '../contract/managed-row.js';
import { rawPartId } from '../contract/row-key.js';
import type { RunManifest } from '../contract/run-manifest.js';
import { exists } from './file-exists.js';
import { isBlank, jsonlLines, type JsonlLine } from './jsonl-lines.js';

export type SavedFile = 'main' | 'sidecar';

/** One saved outcome: where it is, and what it selects when it is its rollout's latest attempt. */
export interface SavedRecord {
  file: SavedFile;
  lineNo: number;
  /** Byte offset and length of the line, its newline included (NeMo Gym's `RolloutRecord`). */
  offset: number;
  length: number;
  digest: bigint;
  disposition: 'success' | 'failure' | 'omitted';
  failureClass: unknown;
  terminal: boolean;
}

export interface FileScan {
  file: SavedFile;
  path: string;
  /** Saved outcomes (records) in the file. */
  records: number;
  /** Its last line is cut off (not a JSON object, no newline): not a record; a plain reader fails on it. */
  cutOff: boolean;
}

export interface ManagedIndex {
  manifest: RunManifest;
  /** Logical rollouts of the materialized inputs, in their order. */
  expected: string[];
  /** Rollout → latest allocated attempt (absent: never dispatched). */
  latest: Map<string, number>;
  /** `identity \0 attempt` → its saved outcome. */
  saved: Map<string, SavedRecord>;
  files: FileScan[];
}

export const savedKey = (identity: string, attempt: number): string => `${identity}\u0000${attempt}`;

export interface ManagedPaths {
  output: string;
  sidecar: string;
  materialized: string;
}

function rowError(path: string, lineNo: number, what: string): ConfigError {
  return new ConfigError(
    `${path}:${lineNo}: ${what}; the run's files do not match its manifest: restore them from backup, or read the run with NeMo Gym`,
  );
}

interface ExpectedRow {
  task?: string;
  rollout?: string;
}

/** The materialized inputs: identity → its indices, in order; checks the manifest's digest and allocations. */
async function readExpected(path: string, manifest: RunManifest): Promise<Map<string, ExpectedRow>> {
  if (!(await exists(path)))
    throw new ConfigError(`${path} is missing: a managed run keeps its materialized inputs beside its manifest; restore it from backup`);
  const expected = new Map<string, ExpectedRow>();
  const hash = createHash('sha256').update('[');
  let first = true;
  for await (const line of jsonlLines(path)) {
    if (isBlank(line.text)) continue;
    let facts: ManagedRowFacts;
    try {
      if (manifest.materializedDigest !== null) hash.update((first ? '' : ',') + pyJsonDumps(parseStrictJson(line.text), true));
      facts = managedRowFacts(line.text);
    } catch (e) {
      if (!line.terminated) break; // an interrupted final write is not a row
      throw rowError(path, line.lineNo, (e as Error).message);
    }
    first = false;
    if (expected.has(facts.identity)) throw rowError(path, line.lineNo, `duplicate logical rollout id '${facts.identity}'`);
    expected.set(facts.identity, { task: facts.task, rollout: facts.rollout });
  }
  if (manifest.materializedDigest !== null && hash.update(']').digest('hex') !== manifest.materializedDigest)
    throw new ConfigError(`${path}: the saved materialized inputs do not match the run manifest's digest; restore them from backup`);
  const unexpected = [...manifest.nextAttempt.keys()].filter((id) => !expected.has(id));
  if (unexpected.length > 0)
    throw new ConfigError(
      `the run manifest reserves attempts for rollouts not in ${path}: ${unexpected.slice(0, 5).join(', ')}; restore the run from backup`,
    );
  return expected;
}

const samePart = (a: string | undefined, b: string | undefined): boolean => rawPartId(a ?? 'null') === rawPartId(b ?? 'null');

/** Indexes the run; `importLegacy`: number rows without `_ng_run_id` by arrival (NeMo Gym's legacy import). */
export async function indexManagedRun(paths: ManagedPaths, manifest: RunManifest, importLegacy: boolean): Promise<ManagedIndex> {
  const expected = await readExpected(paths.materialized, manifest);
  const latest = new Map<string, number>();
  for (const [id, next] of manifest.nextAttempt) latest.set(id, next - 1);
  const saved = new Map<string, SavedRecord>();
  const legacyCounts = new Map<string, number>();
  const files: FileScan[] = [];
  for (const [file, path] of [
    ['sidecar', paths.sidecar],
    ['main', paths.output],
  ] as const) {
    if (!(await exists(path))) continue;
    const scan: FileScan = { file, path, records: 0, cutOff: false };
    files.push(scan);
    for await (const line of jsonlLines(path, 0, { digests: true })) {
      if (isBlank(line.text)) continue;
      let facts: ManagedRowFacts;
      try {
        facts = managedRowFacts(line.text);
      } catch (e) {
        if (!line.terminated) {
          scan.cutOff = true;
          break;
        }
        throw rowError(path, line.lineNo, (e as Error).message);
      }
      const legacy = importLegacy && facts.runId === undefined;
      const attempt = legacy ? legacyAttempt(facts, line, saved, legacyCounts) : (facts.attempt ?? 0);
      checkRecord(path, line.lineNo, file, facts, attempt, legacy, manifest, expected.get(facts.identity));
      const key = savedKey(facts.identity, attempt);
      const previous = saved.get(key);
      if (previous !== undefined && previous.digest !== line.digest)
        throw rowError(
          path,
          line.lineNo,
          `a second, different outcome of rollout '${facts.identity}' attempt ${attempt} (first at ${previous.file === 'main' ? paths.output : paths.sidecar}:${previous.lineNo})`,
        );
      scan.records++;
      latest.set(facts.identity, Math.max(attempt, latest.get(facts.identity) ?? -1));
      saved.set(key, {
        file,
        lineNo: line.lineNo,
        offset: line.offset,
        length: line.rawLength + (line.terminated ? 1 : 0),
        digest: line.digest,
        disposition: outcomeDisposition(facts),
        failureClass: facts.failureClass,
        terminal: facts.terminal,
      });
    }
  }
  return { manifest, expected: [...expected.keys()], latest, saved, files };
}

/** A legacy row's attempt: its own, else the next of its rollout; a clash with a different saved row moves it past that row. */
function legacyAttempt(facts: ManagedRowFacts, line: JsonlLine, saved: Map<string, SavedRecord>, counts: Map<string, number>): number {
  const next = counts.get(facts.identity) ?? 0;
  let attempt = facts.attempt ?? next;
  const previous = saved.get(savedKey(facts.identity, attempt));
  if (previous !== undefined && previous.digest !== line.digest) attempt = Math.max(next, attempt + 1);
  counts.set(facts.identity, Math.max(next, attempt + 1));
  return attempt;
}

function checkRecord(
  path: string,
  lineNo: number,
  file: SavedFile,
  facts: ManagedRowFacts,
  attempt: number,
  legacy: boolean,
  manifest: RunManifest,
  expected: ExpectedRow | undefined,
): void {
  if (expected === undefined) throw rowError(path, lineNo, `rollout '${facts.identity}' is not in this run's materialized inputs`);
  if (!samePart(facts.task, expected.task) || !samePart(facts.rollout, expected.rollout))
    throw rowError(path, lineNo, `rollout '${facts.identity}' has other task/rollout indices than its materialized input`);
  if (legacy) return;
  if ((file === 'main') === facts.failure)
    throw rowError(
      path,
      lineNo,
      file === 'main'
        ? 'a failure (it has _ng_failure_class) in the results file'
        : 'a result (no _ng_failure_class) in the failures sidecar',
    );
  if (facts.runId !== manifest.runId)
    throw rowError(path, lineNo, `the outcome belongs to a different run (_ng_run_id ${JSON.stringify(facts.runId ?? null)})`);
  if (attempt >= (manifest.nextAttempt.get(facts.identity) ?? 0))
    throw rowError(path, lineNo, `rollout '${facts.identity}' attempt ${attempt} has no reserved attempt in the run manifest`);
}
