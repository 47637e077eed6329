/**
 * What `reverify status` shows of a run's coverage, read-only: the counts of its files now, with
 * the expected rollouts and the attempt cap saved in `<out stem>_coverage.json` (the same
 * arithmetic as the file's writer, so a live run's numbers are current, not those of when its
 * outputs opened); and the preview of `--extend-attempts N`: the rollouts (the seed's
 * `replayable_identities` at the saved cap) that the extension would make pending. Nothing beside
 * the output is written (a big run's sort spills to the system's temp directory).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { capOf, coverageBlock, coverageOf, reopensWith, type AttemptCap, type Coverage } from '../contract/coverage.js';
import { coveragePath, prefixedOutputPath, sidecarPath } from '../contract/file-names.js';
import { ConfigError } from '../contract/errors.js';
import { UNSAFE_PREFIX } from '../contract/keys.js';
import { readCoverageFile } from '../io/coverage-file.js';
import { countCoverage, scanKeys } from '../planning/coverage-scan.js';

/** The output a `-o` names and its coverage file: as given, else with the `unsafe_` prefix (--force). */
function located(output: string): { output: string; file: string } {
  const plain = resolve(output);
  const unsafe = prefixedOutputPath(plain, UNSAFE_PREFIX);
  if (!existsSync(coveragePath(plain)) && existsSync(coveragePath(unsafe))) return { output: unsafe, file: coveragePath(unsafe) };
  return { output: plain, file: coveragePath(plain) };
}

export interface CoverageNow {
  file: string;
  coverage: Coverage;
}

/** The coverage of the run writing `output`, counted from its files now; null when it has no coverage file. */
export async function coverageNow(output: string): Promise<CoverageNow | null> {
  const { output: out, file } = located(output);
  const saved = await readCoverageFile(file);
  if (saved === null) return null;
  // Counted from missing files, every rollout would read "never dispatched".
  if (!existsSync(out))
    throw new ConfigError(
      `the output '${out}' does not exist (deleted or moved since the run?): its coverage cannot be counted from the files; ${file} holds what the run saved`,
    );
  const rules = { retryTerminalTimeouts: saved.retry_terminal_timeouts === true };
  const counts = await countCoverage({ output: out, sidecar: sidecarPath(out) }, rules, capOf(saved), tmpdir());
  const coverage = coverageOf(counts, {
    run_id: saved.run_id ?? '',
    state: saved.state ?? 'open',
    expected: saved.expected ?? null,
    not_persisted: saved.unknown ?? 0,
    outcomes_recorded: saved.outcomes_recorded ?? 0,
    cap: { max_rollout_attempts: saved.max_rollout_attempts, attempt_extension: saved.attempt_extension },
    retry_terminal_timeouts: rules.retryTerminalTimeouts,
    output: out,
    failures: sidecarPath(out),
  });
  return { file, coverage };
}

/** The coverage block of `reverify status`, or nothing when the run has no coverage file; `live`: the run is writing. */
export function coverageLines(now: CoverageNow | null, live = false): string[] {
  return now === null ? [] : coverageBlock(now.coverage, now.file, live);
}

/** A key id (`keyId`) as Python prints the key: `(3, 1)`, `('a', None)`. */
export function shownKeyId(id: string): string {
  const part = (p: string) => (p === 'z' ? 'None' : p.startsWith('s') ? `'${p.slice(1)}'` : p);
  const [task, rollout] = JSON.parse(id) as [string, string];
  return `(${part(task)}, ${part(rollout)})`;
}

export interface ExtensionPreview {
  file: string;
  cap: AttemptCap;
  extension: number;
  /** The rollouts the extension would make pending, as key ids in key order. */
  reopened: string[];
}

/** Which rollouts `--resume --extend-attempts N` would run again; reads only. */
export async function previewExtension(output: string, extension: number): Promise<ExtensionPreview | null> {
  const { output: out, file } = located(output);
  const saved = await readCoverageFile(file);
  if (saved === null) return null;
  const cap = { max_rollout_attempts: saved.max_rollout_attempts, attempt_extension: saved.attempt_extension };
  const reopened: string[] = [];
  const rules = { retryTerminalTimeouts: saved.retry_terminal_timeouts === true };
  await scanKeys({ output: out, sidecar: sidecarPath(out) }, rules, tmpdir(), (key, t) => {
    if (reopensWith(t, capOf(cap), extension)) reopened.push(key);
  });
  return { file, cap, extension, reopened };
}

const SHOWN_KEYS = 20;

export function previewLines(p: ExtensionPreview): string[] {
  const from = capOf(p.cap);
  const keys = p.reopened.slice(0, SHOWN_KEYS).map(shownKeyId).join(', ');
  const more = p.reopened.length > SHOWN_KEYS ? `, and ${p.reopened.length - SHOWN_KEYS} more` : '';
  return [
    `Preview (nothing written): --extend-attempts ${p.extension} would raise the attempt cap from ${from} to ${from + p.extension} ` +
      `(saved in ${p.file}) and reopen ${p.reopened.length} rollout(s)${p.reopened.length > 0 ? `: ${keys}${more}` : ''}`,
  ];
}
