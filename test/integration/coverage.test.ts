/**
 * The coverage file, the attempt cap saved with a run, and omissions, through `reverify run` and
 * `reverify status` as a user runs them (in process, real workflow on the shared dev server, a
 * scripted resources server):
 * - `<out stem>_coverage.json` is written when the outputs open, at the end, and when the run is
 *   cancelled; its numbers are the files' line counts; the run and `status` print the same block;
 * - `--resume` keeps the saved cap (one line when today's differs); keys at the cap are reported
 *   with the "Retry budget exhausted" line; `status --extend-attempts N` previews the keys an
 *   extension reopens and writes nothing; `--resume --extend-attempts N` sends exactly those, once;
 * - omissions (`_ng_omitted`) are never retried and count as intentionally omitted;
 * - rows a paused-then-cancelled run never reached count as never dispatched, and `--resume` runs them.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlCommand } from '../../src/cli/control-command.js';
import { statusCommand } from '../../src/cli/status-command.js';
import type { Coverage } from '../../src/contract/coverage.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { progressQuery } from '../../workflows/definitions.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, keyText, reward, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { failureLine, lines, successLine, tasks, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { escapeRegExp } from '../helpers/regexp.js';

const temporal = useSharedTemporal('coverage');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

const coverageOf = (dir: string): Coverage => JSON.parse(readFileSync(join(dir, 'out_coverage.json'), 'utf8')) as Coverage;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sentFor = (s: { verifyBodies: Array<Record<string, unknown>> }, key: string) =>
  s.verifyBodies.filter((b) => keyText(b) === key).length;

/** Names, sizes and modification times of every file of a directory: what "nothing written" keeps. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((f) => {
      const st = statSync(join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    });
}

/** The numbers a coverage file must share with the files it describes. */
function expectLineCounts(cov: Coverage, f: { output: string; outputSidecar: string }): void {
  const main = lines(f.output);
  const side = lines(f.outputSidecar);
  const omissions = side.filter((l) => l.includes('"_ng_omitted":true')).length;
  // Terminal failures are attempts the retry budget does not count (nor are omissions).
  const terminal = side.filter((l) => l.includes('"_ng_failure_terminal":true') && !l.includes('"_ng_omitted":true')).length;
  expect(cov.successful).toBe(new Set(main.map((l) => keyText(JSON.parse(l)))).size);
  expect(cov.reporting.main_rows).toBe(main.length);
  expect(cov.reporting.sidecar_rows).toBe(side.length);
  expect(cov.counted_failures).toBe(side.length - omissions - terminal);
  expect(cov.reporting.terminal_rows).toBe(terminal);
  expect(cov.reconciled).toBe(true);
  expect(cov.attempts).toBe(main.length + side.length - omissions);
  expect(cov.successful + cov.failed + cov.intentionally_omitted + cov.unknown + cov.never_dispatched).toBe(cov.expected);
  // failure_export_metrics(): the same totals, per class from the sidecar's lines.
  const m = cov.failure_export_metrics;
  expect(m['failures/failed_attempts']).toBe(side.length - omissions);
  for (const cls of new Set(side.map((l) => JSON.parse(l)._ng_failure_class as string)))
    if (!side.some((l) => l.includes('"_ng_omitted":true') && l.includes(`"${cls}"`)))
      expect(m[`failures/failed_attempts/${cls}`]).toBe(side.filter((l) => JSON.parse(l)._ng_failure_class === cls).length);
  expect(m['failures/failed_rollouts']).toBe(cov.failed);
  expect(m['failures/budget_exhausted']).toBe(cov.attempts_exhausted);
  expect(m['failures/retryable']).toBe(cov.retryable);
  expect(m['failures/intentionally_omitted']).toBe(cov.intentionally_omitted);
}

describe('coverage file and saved attempt caps', () => {
  it('saves the cap with the run; --resume keeps it; the budget line, the preview and --extend-attempts reopen exactly the keys at the cap', async () => {
    const s = await server({ verify: byTask({ 3: judgeFailed() }, reward(1.0)) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
    const run = (extra: Record<string, unknown>) =>
      runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], rejudge: false, ...extra });

    // First run: cap 2 from --max-attempts; task 3 judge-fails once.
    const first = await run({ maxAttempts: 2 });
    expect(first.error).toBeNull();
    let cov = coverageOf(f.dir);
    expect(cov).toMatchObject({
      state: 'finished',
      expected: 6,
      successful: 5,
      failed: 1,
      retryable: 1,
      attempts_exhausted: 0,
      max_rollout_attempts: 2,
      attempt_extension: 0,
      attempt_cap: 2,
      complete: false,
      outcomes_recorded: 6,
    });
    expectLineCounts(cov, f);
    const block = first.lines.join('\n');
    expect(block).toContain(`Coverage (${join(f.dir, 'out_coverage.json')}):`);
    expect(block).toContain('  6 expected: 5 successful, 1 failed, 0 intentionally omitted, 0 unknown, 0 never dispatched');
    const status: string[] = [];
    await statusCommand(f.output, (l) => status.push(l));
    expect(status).toContain('  6 expected: 5 successful, 1 failed, 0 intentionally omitted, 0 unknown, 0 never dispatched');

    // Resume with today's cap 5: the saved 2 applies, said in one line; task 3 fails a second time.
    const second = await run({ maxAttempts: 5, resume: true });
    expect(second.error).toBeNull();
    expect(second.lines).toContain(
      `Attempt cap: 2, as saved with the run in ${join(f.dir, 'out_coverage.json')}, not 5 from --max-attempts; to raise it, pass --extend-attempts N`,
    );
    expect(sentFor(s, '3:0')).toBe(2);
    cov = coverageOf(f.dir);
    expect(cov).toMatchObject({ failed: 1, retryable: 0, attempts_exhausted: 1, counted_failures: 2, attempt_cap: 2, complete: true });
    expectLineCounts(cov, f);

    // Resume again: task 3 is at the cap; nothing is sent, and the budget line names the sidecar.
    const sent = s.verifyBodies.length;
    const third = await run({ maxAttempts: 5, resume: true });
    expect(third.error).toBeNull();
    expect(third.lines.join('\n')).toContain(
      `Retry budget exhausted for 1 rollout(s) at the cap of 2 counted failures. They will not be dispatched with this cap. Failures: ${f.outputSidecar}.`,
    );
    expect(s.verifyBodies.length).toBe(sent);

    // The preview names the key an extension would reopen, and writes nothing.
    const before = snapshot(f.dir);
    const preview: string[] = [];
    await statusCommand(f.output, (l) => preview.push(l), { extendAttempts: 1 });
    expect(preview).toEqual([
      `Preview (nothing written): --extend-attempts 1 would raise the attempt cap from 2 to 3 (saved in ${join(f.dir, 'out_coverage.json')}) and reopen 1 rollout(s): (3, 0)`,
    ]);
    expect(snapshot(f.dir)).toEqual(before);

    // --extend-attempts 1: exactly that key is sent once more, and the extension is saved.
    const fourth = await run({ resume: true, extendAttempts: 1 });
    expect(fourth.error).toBeNull();
    expect(s.verifyBodies.length).toBe(sent + 1);
    expect(sentFor(s, '3:0')).toBe(3);
    cov = coverageOf(f.dir);
    expect(cov).toMatchObject({
      max_rollout_attempts: 2,
      attempt_extension: 1,
      attempt_cap: 3,
      counted_failures: 3,
      attempts_exhausted: 1,
    });
    expectLineCounts(cov, f);

    // A later --resume keeps the extended cap: nothing more is sent.
    const fifth = await run({ resume: true, maxAttempts: 3 });
    expect(fifth.error).toBeNull();
    expect(fifth.lines.join('\n')).toContain('Retry budget exhausted for 1 rollout(s) at the cap of 3 counted failures.');
    expect(s.verifyBodies.length).toBe(sent + 1);

    // The output deleted since: status says so instead of counting every rollout "never dispatched".
    rmSync(f.output);
    const gone: string[] = [];
    await statusCommand(f.output, (l) => gone.push(l));
    expect(gone.join('\n')).not.toContain('never dispatched');
    expect(gone).toContain(
      `Coverage: the output '${f.output}' does not exist (deleted or moved since the run?): its coverage cannot be counted from the files; ${join(f.dir, 'out_coverage.json')} holds what the run saved`,
    );
  });

  it('--extend-attempts without --resume is one clear line, and nothing is written', async () => {
    const s = await server({});
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    const r = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], extendAttempts: 1 });
    expect(r.error).toEqual({
      line: 'Error: --extend-attempts raises the attempt cap saved with a run: use it with --resume (a new run takes --max-attempts)',
      code: 1,
    });
    expect(readdirSync(f.dir).sort()).toEqual(['inputs.jsonl', 'rollouts.jsonl']);
  });

  it('--resume with a coverage file that is not JSON is one clear line naming it, and nothing is written', async () => {
    const s = await server({});
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    writeFileSync(join(f.dir, 'out_coverage.json'), '{"max_rollout_attempts": 3,');
    const before = snapshot(f.dir);
    const r = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], resume: true });
    expect(r.error?.code).toBe(1);
    expect(r.error?.line).toMatch(
      new RegExp(
        `^Error: the coverage file '${escapeRegExp(join(f.dir, 'out_coverage.json'))}' is not JSON \\(.*\\): restore it, or delete it to use today's attempt cap$`,
      ),
    );
    expect(snapshot(f.dir)).toEqual(before);
    expect(s.verifyBodies).toHaveLength(0);
  });

  it('omissions are never retried nor aggregated, and count as intentionally omitted, not failed', async () => {
    const s = await server({});
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    const omission = JSON.stringify({
      ...(JSON.parse(failureLine({ t: 1 }, 'skipped', { terminal: true })) as object),
      _ng_omitted: true,
      _ng_failure_message: 'left out of this evaluation on purpose',
    });
    writeLines(f.outputSidecar, [omission, failureLine({ t: 2 })]);
    const r = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      servers: [s.flag('rs')],
      resume: true,
      maxAttempts: 3,
    });
    expect(r.error).toBeNull();
    expect(s.verifyBodies.map((b) => keyText(b)).sort()).toEqual(['2:0', '3:0']);
    expect(s.aggregateBodies.flatMap((b) => b.verify_responses.map((row) => keyText(row))).sort()).toEqual(['0:0', '2:0', '3:0']);
    const cov = coverageOf(f.dir);
    expect(cov).toMatchObject({ expected: 4, successful: 3, failed: 0, intentionally_omitted: 1, never_dispatched: 0, complete: true });
    expectLineCounts(cov, f);
  });

  it('rows a paused run never reached count as never dispatched after a cancel; --resume runs them', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    // Tasks 10 and above wait at the gate: the run is paused while their first batch waits.
    const s = await server({
      verify: async (row): Promise<Reply> => {
        if ((row._ng_task_index as number) >= 10) await gate;
        return reward(1.0);
      },
    });
    const ts = [...Array(40).keys()];
    const f = writeFixture(tempDir(), { inputs: tasks(ts) });
    const opts = { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], batchSize: 5, concurrency: 5 };
    const running = runReverify(opts);
    const handle = client().workflow.getHandle(workflowIdForOutput(f.output));
    while (!s.verifyBodies.some((b) => (b._ng_task_index as number) >= 10)) await sleep(20);
    // Written when the outputs opened: nothing scored yet, all 40 expected.
    expect(coverageOf(f.dir)).toMatchObject({ state: 'open', expected: 40, successful: 0, never_dispatched: 40 });
    await controlCommand({ output: f.output, pause: true }, () => undefined);
    release();
    for (;;) {
      const p = await handle.query(progressQuery); // the in-process worker answers
      if (p.paused && p.inFlightRows === 0 && lines(f.output).length === p.done) break;
      await sleep(50);
    }
    // What `reverify cancel` does (its CLI is tested in run-endings.test.ts).
    await handle.cancel();
    const cancelled = await running;
    expect(cancelled.error?.code).toBe(4);
    const cov = coverageOf(f.dir);
    const scored = lines(f.output).length;
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(40);
    expect(cov).toMatchObject({
      state: 'cancelled',
      expected: 40,
      successful: scored,
      failed: 0,
      never_dispatched: 40 - scored,
      complete: false,
    });
    expectLineCounts(cov, f);

    const sent = s.verifyBodies.length;
    const resumed = await runReverify({ ...opts, resume: true });
    expect(resumed.error).toBeNull();
    expect(s.verifyBodies.length - sent).toBe(40 - scored);
    expect(new Set(lines(f.output)).size).toBe(40);
    const done = coverageOf(f.dir);
    expect(done).toMatchObject({ state: 'finished', expected: 40, successful: 40, never_dispatched: 0, complete: true });
    expectLineCounts(done, f);
  });
});

describe('coverage after a failed run', () => {
  it('a run that fails after its outputs opened still writes the file, matching the files', async () => {
    // Task 2's inputs row changes while the run is paused: its read is not the planned row, the run fails.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const s = await server({
      verify: async (row): Promise<Reply> => {
        if ((row._ng_task_index as number) === 1) await gate;
        return reward(1.0);
      },
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]) });
    const running = runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      servers: [s.flag('rs')],
      batchSize: 1,
      concurrency: 1,
    });
    const handle = client().workflow.getHandle(workflowIdForOutput(f.output));
    while (!s.verifyBodies.some((b) => b._ng_task_index === 1)) await sleep(20);
    await controlCommand({ output: f.output, pause: true }, () => undefined);
    release();
    for (;;) {
      const p = await handle.query(progressQuery);
      if (p.inFlightRows === 0 && p.done === 2) break;
      await sleep(50);
    }
    const inputs = readFileSync(f.inputs, 'utf8').split('\n');
    inputs[2] = inputs[2].replace('"_ng_task_index":2', '"_ng_task_index":2,"changed":true');
    writeFileSync(f.inputs, inputs.join('\n'));
    await controlCommand({ output: f.output, unpause: true }, () => undefined);
    const failed = await running;
    expect(failed.error).not.toBeNull();
    const cov = coverageOf(f.dir);
    expect(cov).toMatchObject({ state: 'failed', expected: 4, successful: 2, complete: false });
    expectLineCounts(cov, f);
  });
});
