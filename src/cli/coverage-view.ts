/**
 * What `reverify status` shows of a run's coverage, read-only: the counts of its files now, with
 * the expected rollouts and the attempt cap saved in `<out stem>_coverage.json` (the same
 * arithmetic as the file's writer, so a live run's numbers are current, not those of when its
 * outputs opened); and the preview of what a `--resume` with `--extend-attempts N` and/or a policy
 * override (`--[no-]retry-terminal-timeouts`, `--[no-]dispatch-longest-first`) would change: the
 * rollouts that become pending (for the extension, the seed's `replayable_identities` at the saved
 * cap) or stop being pending, and the policies in force (the seed's read-only `pending(...)` with
 * an explicit override). Nothing beside the output is written (a big run's sort spills to the
 * system's temp directory).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { coverageBlock } from '../contract/coverage-block.js';
import { capOf, coverageOf, isReplayable, type AttemptCap, type Coverage, type KeyTally } from '../contract/coverage.js';
import type { RetryRules } from '../contract/run-spec.js';
import { coveragePath, prefixedOutputPath, sidecarPath } from '../contract/file-names.js';
import { ConfigError } from '../contract/errors.js';
import { UNSAFE_PREFIX } from '../contract/keys.js';
import { readCoverageFile } from '../io/coverage-file.js';
import { countCoverage, scanKeys } from '../planning/coverage-scan.js';
import { policiesInForce, type PoliciesInForce, type PolicyFlags } from './saved-policy.js';

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
    dispatch_longest_first: saved.dispatch_longest_first === true,
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

export interface ResumePreview {
  file: string;
  cap: AttemptCap;
  extension: number;
  /** The policies as saved with the run, and as the resume would have them (saved-policy.ts). */
  saved: PoliciesInForce;
  inForce: PoliciesInForce;
  /** The rollouts the resume would make pending, as key ids in key order. */
  reopened: string[];
  /** The rollouts pending now that the resume would leave terminal (`--no-retry-terminal-timeouts`). */
  closed: string[];
}

/** Whether a key's files leave it pending (a `--resume` runs it) under an attempt cap. */
const pendingAt = (t: KeyTally, cap: number) => isReplayable(t) && t.counted < cap;

/** The keys pending under `rules` and `cap`, in key order. */
async function pendingKeys(out: string, rules: RetryRules, cap: number): Promise<string[]> {
  const keys: string[] = [];
  await scanKeys({ output: out, sidecar: sidecarPath(out) }, rules, tmpdir(), (key, t) => {
    if (pendingAt(t, cap)) keys.push(key);
  });
  return keys;
}

/**
 * What `--resume` with `change` (an extension, policy flags) would run that the saved run would
 * not, and the reverse; reads only. The keys come from two key-ordered scans (saved rules, new rules).
 */
export async function previewResume(output: string, change: { extension: number } & PolicyFlags): Promise<ResumePreview | null> {
  const { output: out, file } = located(output);
  const saved = await readCoverageFile(file);
  if (saved === null) return null;
  const cap = { max_rollout_attempts: saved.max_rollout_attempts, attempt_extension: saved.attempt_extension };
  const was = policiesInForce({}, saved, file).inForce;
  const { inForce } = policiesInForce(change, saved, file);
  const before = await pendingKeys(out, { retryTerminalTimeouts: was.retryTerminalTimeouts }, capOf(cap));
  const after = await pendingKeys(out, { retryTerminalTimeouts: inForce.retryTerminalTimeouts }, capOf(cap) + change.extension);
  const beforeSet = new Set(before);
  const afterSet = new Set(after);
  return {
    file,
    cap,
    extension: change.extension,
    saved: was,
    inForce,
    reopened: after.filter((k) => !beforeSet.has(k)),
    closed: before.filter((k) => !afterSet.has(k)),
  };
}

const SHOWN_KEYS = 20;

function keyList(ids: string[]): string {
  if (ids.length === 0) return '';
  const more = ids.length > SHOWN_KEYS ? `, and ${ids.length - SHOWN_KEYS} more` : '';
  return `: ${ids.slice(0, SHOWN_KEYS).map(shownKeyId).join(', ')}${more}`;
}

const onOff = (v: boolean) => (v ? 'on' : 'off');

export function previewLines(p: ResumePreview): string[] {
  const from = capOf(p.cap);
  const changes: string[] = [];
  if (p.extension > 0) changes.push(`--extend-attempts ${p.extension} would raise the attempt cap from ${from} to ${from + p.extension}`);
  const policy = (name: string, flag: string, a: boolean, b: boolean) =>
    a !== b ? changes.push(`${b ? flag : flag.replace(/^--/, '--no-')} would turn ${name} ${onOff(b)}`) : undefined;
  policy('retrying terminal timeouts', '--retry-terminal-timeouts', p.saved.retryTerminalTimeouts, p.inForce.retryTerminalTimeouts);
  policy('longest-first dispatch', '--dispatch-longest-first', p.saved.dispatchLongestFirst, p.inForce.dispatchLongestFirst);
  const what = changes.length > 0 ? changes.join(', ') : 'the options given change nothing saved';
  const closed = p.closed.length > 0 ? ` and leave ${p.closed.length} pending rollout(s) terminal${keyList(p.closed)}` : '';
  const order = p.inForce.dispatchLongestFirst ? '; the rollouts to run go longest first (largest saved rows first)' : '';
  return [
    `Preview (nothing written): ${what} (saved in ${p.file}) and reopen ${p.reopened.length} rollout(s)${keyList(p.reopened)}${closed}${order}`,
  ];
}
