/**
 * `--retry-terminal-timeouts` end to end (real CLI, workflow and reference resources server): with
 * `--resume`, terminal `timeout_exceeded` rows and the repairable environment classes are retried
 * (`skipped` is not), and the re-judgment rounds treat such a key as the resume did. The policy is
 * saved with the run: a resume keeps it, `--no-retry-terminal-timeouts` turns it off, and
 * `reverify status` previews either override without writing anything.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statusCommand } from '../../src/cli/status-command.js';
import { describe, expect, it } from 'vitest';
import { savedPolicyOffNotice, savedTimeoutPolicyNotice } from '../../src/contract/messages.js';
import type { ReferenceServerOptions } from '../../src/reference-server/options.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { failureLine, keys, rows, successLine, tasks, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('retry-terminal-timeouts');
const server = closedAfterEach(startReferenceServer);

/**
 * Keys 0..6; the output holds key 0; its sidecar a terminal row for keys 1 (timeout_exceeded),
 * 2 (eval_missing), 3 (skipped), 4 (verify_rejected), and three timeout rows for key 5 (maxed out).
 */
async function interrupted(judge: Partial<ReferenceServerOptions> = {}) {
  const rs = await server({ port: 0, ...judge });
  const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5, 6]) });
  writeLines(f.output, [successLine({ t: 0 })]);
  const terminal = (t: number, cls: string) => failureLine({ t }, cls, { terminal: true });
  writeLines(f.outputSidecar, [
    terminal(1, 'timeout_exceeded'),
    terminal(2, 'eval_missing'),
    terminal(3, 'skipped'),
    terminal(4, 'verify_rejected'),
    ...[1, 2, 3].map(() => terminal(5, 'timeout_exceeded')),
  ]);
  const run = (extra: Record<string, unknown>) =>
    runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      servers: [`rs=${rs.url}`],
      resume: true,
      maxAttempts: 3,
      ...extra,
    });
  return { f, run };
}

const coverageFile = (output: string) => output.replace(/\.jsonl$/, '_coverage.json');
const savedCoverage = (output: string) => JSON.parse(readFileSync(coverageFile(output), 'utf8')) as Record<string, unknown>;
const saveCoverage = (output: string, retry: boolean) =>
  writeFileSync(coverageFile(output), JSON.stringify({ max_rollout_attempts: 3, attempt_extension: 0, retry_terminal_timeouts: retry }));

/** Names, sizes and modification times of a directory's files: what "nothing written" keeps. */
const snapshot = (dir: string) =>
  readdirSync(dir)
    .sort()
    .map((n) => `${n} ${statSync(join(dir, n)).size} ${statSync(join(dir, n)).mtimeMs}`);

const summaryLine = (lines: string[], what: string) =>
  lines
    .join('\n')
    .split('\n')
    .find((l) => l.includes(what));

describe('--retry-terminal-timeouts', () => {
  it('--resume retries terminal timeouts and repairable faults, never skipped or other terminal rows, within the cap', async () => {
    const { f, run } = await interrupted();
    const { error, lines } = await run({ retryTerminalTimeouts: true });
    expect(error).toBeNull();
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '6:0']);
    expect(summaryLine(lines, 'sidecar-terminal')).toBe('- 2 sidecar-terminal (for example skipped) → not retried');
    expect(summaryLine(lines, 'max_attempts')).toBe('- 1 hit max_attempts → not retried');
    expect(summaryLine(lines, 'still need')).toBe('- 3 rows that still need to be run');
    // The budget counts non-terminal failures: the 5 timeout / eval_missing rows the policy retries;
    // the skipped and verify_rejected rows stay terminal and are not counted.
    expect(savedCoverage(f.output)).toMatchObject({ counted_failures: 5, reporting: { sidecar_rows: 7, terminal_rows: 2 } });
  });

  it('a resume keeps the saved policy: a run saved with the flag retries terminal timeouts without it', async () => {
    const { f, run } = await interrupted();
    // The run as saved by an earlier run of this output with the flag (its coverage file).
    writeFileSync(
      f.output.replace(/\.jsonl$/, '_coverage.json'),
      JSON.stringify({ max_rollout_attempts: 3, attempt_extension: 0, retry_terminal_timeouts: true }),
    );
    const { error, lines } = await run({});
    expect(error).toBeNull();
    expect(lines).toContain(savedTimeoutPolicyNotice(f.output.replace(/\.jsonl$/, '_coverage.json')));
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '6:0']);
    const saved = JSON.parse(readFileSync(f.output.replace(/\.jsonl$/, '_coverage.json'), 'utf8')) as Record<string, unknown>;
    expect(saved.retry_terminal_timeouts).toBe(true);
  });

  it('--no-retry-terminal-timeouts turns a saved policy off: stamped rows stay terminal, and it is saved off', async () => {
    const { f, run } = await interrupted();
    saveCoverage(f.output, true);
    const { error, lines } = await run({ retryTerminalTimeouts: false });
    expect(error).toBeNull();
    expect(lines).toContain(savedPolicyOffNotice('--retry-terminal-timeouts', coverageFile(f.output)));
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '6:0']);
    const saved = JSON.parse(readFileSync(coverageFile(f.output), 'utf8')) as Record<string, unknown>;
    expect(saved.retry_terminal_timeouts).toBe(false);
  });

  it('status previews a policy override, either way, and writes nothing', async () => {
    const { f } = await interrupted();
    saveCoverage(f.output, false);
    const before = snapshot(f.dir);
    const on: string[] = [];
    await statusCommand(f.output, (l) => on.push(l), { retryTerminalTimeouts: true });
    // Keys 1 (timeout_exceeded) and 2 (eval_missing); not 3 (skipped), 4 (not a timeout), 5 (at the cap).
    expect(on).toEqual([
      `Preview (nothing written): --retry-terminal-timeouts would turn retrying terminal timeouts on (saved in ${coverageFile(f.output)}) and reopen 2 rollout(s): (1, 0), (2, 0)`,
    ]);
    saveCoverage(f.output, true);
    const saved = snapshot(f.dir);
    const off: string[] = [];
    await statusCommand(f.output, (l) => off.push(l), { retryTerminalTimeouts: false, json: true });
    const preview = JSON.parse(off[0]) as Record<string, unknown>;
    expect(preview).toMatchObject({ reopened: [], closed: ['["1","0"]', '["2","0"]'], inForce: { retryTerminalTimeouts: false } });
    expect(snapshot(f.dir)).toEqual(saved);
    expect(before.filter((l) => !l.startsWith('out_coverage.json'))).toEqual(saved.filter((l) => !l.startsWith('out_coverage.json')));
  });

  it('without it, every stamped row is terminal', async () => {
    const { f, run } = await interrupted();
    const { error, lines } = await run({});
    expect(error).toBeNull();
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '6:0']);
    expect(summaryLine(lines, 'sidecar-terminal')).toBe('- 5 sidecar-terminal (for example skipped) → not retried');
    // Every sidecar row is stamped terminal: none counts against the budget.
    expect(savedCoverage(f.output)).toMatchObject({ counted_failures: 0, attempts: 9, reporting: { sidecar_rows: 7, terminal_rows: 7 } });
  });

  it('the re-judgment rounds keep re-judging a key whose earlier row is a terminal timeout, as repeated resumes would', async () => {
    // Key 1's first grading in this run is an invalid verdict: round 2 must re-judge it (its
    // timeout row does not make it terminal), and it then succeeds.
    const { f, run } = await interrupted({ invalidJudge: ['1:0@1', '2:0'] });
    const { result, error } = await run({ retryTerminalTimeouts: true, retryInvalidJudgeResponses: true, rejudgeDelayMs: 0 });
    expect(error).toBeNull();
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '6:0']);
    // Key 2 (eval_missing, then invalid twice): 3 attempts, the cap; key 1: its timeout and one invalid verdict.
    const side = keys(rows(f.outputSidecar));
    expect(side.filter((k) => k === '1:0')).toHaveLength(2);
    expect(side.filter((k) => k === '2:0')).toHaveLength(3);
    expect(result!.rounds).toBe(2); // key 2 has used its 3 attempts after round 2
  });
});
