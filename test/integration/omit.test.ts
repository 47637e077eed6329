/**
 * `reverify omit` (the run store's `record_omission(row, reason)`) as a user runs it: the real CLI
 * on the files of a partly scored run (in-process `reverify run`, real workflow on the shared dev
 * server, a scripted resources server):
 * - two rollouts the judge cannot grade are omitted: the coverage file counts them as intentionally
 *   omitted, `--resume` never sends them, `read --disposition omitted` lists them with the reason;
 * - refused with one line: a key already scored, already omitted, not in --rollouts, and a live run
 *   (the run lock held by a collector, or by a `reverify run` driving the run);
 * - the same command run again after a crash in the middle of its append finishes it, once.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Coverage } from '../../src/contract/coverage.js';
import { driverLeasePath, omittingPaths, runLockFilePath, sidecarPath } from '../../src/contract/file-names.js';
import { setFields } from '../../src/contract/json-spans.js';
import { runCli } from '../helpers/cli-process.js';
import { holdLockElsewhere } from '../helpers/foreign-lock.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, keyText, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { failureLine, lines, successLine, tasks, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('omit');
const server = closedAfterEach(startScriptedServer);

const coverageOf = (dir: string): Coverage => JSON.parse(readFileSync(join(dir, 'out_coverage.json'), 'utf8')) as Coverage;
const REASON = 'reference answer is wrong (ticket 42)';

/** A run of tasks 0..5 whose judge cannot grade tasks 2 and 3 (left as judge failures, retryable). */
async function partlyScored() {
  const s = await server({ verify: byTask({ 2: judgeFailed(), 3: judgeFailed() }, reward(1.0)) });
  const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
  writeLines(f.output, [successLine({ t: 0 })]);
  const first = await runReverify({ ...runOpts(f, s), resume: true, rejudge: false, maxAttempts: 3 });
  expect(first.error).toBeNull();
  expect(coverageOf(f.dir)).toMatchObject({ expected: 6, successful: 4, failed: 2, retryable: 2, complete: false });
  return { s, f };
}

const runOpts = (f: { inputs: string; rollouts: string; output: string }, s: { flag: (n: string) => string }) => ({
  inputs: f.inputs,
  rollouts: f.rollouts,
  output: f.output,
  servers: [s.flag('rs')],
});

const omit = (f: { output: string; rollouts: string }, ...args: string[]) =>
  runCli(['omit', '-o', f.output, '--rollouts', f.rollouts, ...args], {});

describe('reverify omit', () => {
  it('omitted rollouts are never sent again, counted as intentionally omitted, and read back with the reason', async () => {
    const { s, f } = await partlyScored();
    const dry = await omit(f, '--keys', '2:0,3:0', '--reason', REASON, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('would omit 2 rollout(s)');
    const sidecarBefore = readFileSync(sidecarPath(f.output), 'utf8');

    const done = await omit(f, '--keys', '2:0,3:0', '--reason', REASON);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/Omitted 2 rollout\(s\) .*: 2:0, 3:0/);
    // Appended once after the failures, which stay.
    const side = readFileSync(sidecarPath(f.output), 'utf8');
    expect(side.startsWith(sidecarBefore)).toBe(true);
    const added = side
      .slice(sidecarBefore.length)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(added.map(keyText)).toEqual(['2:0', '3:0']);
    for (const row of added)
      expect(row).toMatchObject({
        _ng_failure_class: 'skipped',
        _ng_failure_terminal: true,
        _ng_omitted: true,
        _ng_failure_message: REASON,
      });
    expect(coverageOf(f.dir)).toMatchObject({ expected: 6, successful: 4, failed: 0, intentionally_omitted: 2, complete: true });

    const sent = s.verifyBodies.length;
    const resumed = await runReverify({ ...runOpts(f, s), resume: true, maxAttempts: 3 });
    expect(resumed.error).toBeNull();
    expect(s.verifyBodies.length).toBe(sent);
    expect(coverageOf(f.dir)).toMatchObject({ intentionally_omitted: 2, failed: 0, complete: true });

    const read = await runCli(['read', '-o', f.output, '--disposition', 'omitted'], {});
    expect(read.code, read.stderr).toBe(0);
    const listed = read.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listed.map(keyText).sort()).toEqual(['2:0', '3:0']);
    expect(listed.every((r) => r._ng_failure_message === REASON)).toBe(true);
  });

  it('refuses, with one line and nothing written: a scored key, an omitted key, a key not in --rollouts, a live run', async () => {
    const { f } = await partlyScored();
    expect((await omit(f, '--tasks', '2', '--reason', REASON)).code).toBe(0);
    const before = [readFileSync(sidecarPath(f.output), 'utf8'), lines(f.output).length];
    const refusal = async (args: string[], pattern: RegExp) => {
      const r = await omit(f, ...args, '--reason', REASON);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    };
    await refusal(['--keys', '3:0,0:0'], /key 0:0 is already scored .*leave it out of the keys/);
    await refusal(['--keys', '2:0'], /key 2:0 is already omitted .*leave it out of the keys/);
    await refusal(['--keys', '3:0,99:0'], /key 99:0 is not in .*rollouts\.jsonl/);
    const lock = runLockFilePath(f.output);
    const collector = await holdLockElsewhere(lock);
    await refusal(['--keys', '3:0'], /a run is writing .*out\.jsonl .*then omit/);
    await collector.release();
    // A `reverify run` driving the run holds the lock and its driver lease.
    const [driver, lease] = [await holdLockElsewhere(lock), await holdLockElsewhere(driverLeasePath(lock))];
    await refusal(['--keys', '3:0'], /a run is writing/);
    await Promise.all([driver.release(), lease.release()]);
    expect([readFileSync(sidecarPath(f.output), 'utf8'), lines(f.output).length]).toEqual(before);
  });

  it('the same command run again after a crash mid-append finishes it: one copy of each row, exit 0', async () => {
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    writeLines(f.outputSidecar, [failureLine({ t: 1 })]);
    const before = readFileSync(f.outputSidecar, 'utf8');
    // What a crash in the middle of the append leaves: the journal, and half of the rows written.
    const rows = [1, 2].map((t) => omissionLine(t) + '\n').join('');
    const j = omittingPaths(f.output);
    writeFileSync(j.rows, rows);
    writeFileSync(j.header, JSON.stringify({ sidecar_length: Buffer.byteLength(before) }) + '\n');
    appendFileSync(f.outputSidecar, rows.slice(0, rows.indexOf('\n') + 15));
    const again = await omit(f, '--keys', '1:0,2:0', '--reason', REASON);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("Finished an interrupted 'reverify omit': 2 omission row(s)");
    expect(readFileSync(f.outputSidecar, 'utf8')).toBe(before + rows);
    expect(existsSync(j.header)).toBe(false);
  });
});

/** The omission row `omit` writes for key t:0 of the fixture's rollouts. */
function omissionLine(t: number): string {
  return setFields(successLine({ t }), [
    ['_ng_failure_class', '"skipped"'],
    ['_ng_failure_terminal', 'true'],
    ['_ng_omitted', 'true'],
    ['_ng_failure_message', JSON.stringify(REASON)],
  ]);
}
