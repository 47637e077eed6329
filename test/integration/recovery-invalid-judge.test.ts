/**
 * Recovery (`--judge-failed-only`) with `--retry-invalid-judge-responses`, end to end: rows of
 * --rollouts flagged `invalid_judge_response` are first moved into its sidecar and judged again with
 * the judge failures; a worker killed in the middle of the move loses and doubles no row.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.js';
import { captureIo, runReverify, useReferenceServer } from '../helpers/run-fixtures.js';
import { withoutOperationId } from '../helpers/operation-ids.js';
import { failureLine, keys, lines, rows, successLine, tasks, writeFixture, type Fixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('recovery-invalid-judge');
const rs = useReferenceServer({ port: 0 });

/** A flagged row as older NeMo Gym builds stored it: a scored row with `invalid_judge_response`. */
const flagged = (t: number) => successLine({ t }, '0.0').replace('"reward":0.0', '"reward":0.0,"invalid_judge_response":true');

/** Keys 0..9: successes 0..5, flagged rows 6 and 7 in --rollouts; a judge_failed 8 and a judge_invalid 9 in its sidecar. */
function run1(outputName = 'recovered'): Fixture {
  return writeFixture(tempDir(), {
    inputs: tasks([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    successes: [...[0, 1, 2, 3, 4, 5].map((t) => successLine({ t })), flagged(6), flagged(7)],
    failures: [failureLine({ t: 8 }), failureLine({ t: 9 }, 'judge_invalid')],
    outputName,
  });
}

const recover = (f: Fixture, extra: Record<string, unknown> = {}) =>
  runReverify({
    inputs: f.inputs,
    rollouts: f.rollouts,
    output: f.output,
    servers: [`rs=${rs().url}`],
    judgeFailedOnly: true,
    retryInvalidJudgeResponses: true,
    ...extra,
  });

const sortedKeys = (path: string) => keys(rows(path)).sort();
const ALL = ['0:0', '1:0', '2:0', '3:0', '4:0', '5:0', '6:0', '7:0', '8:0', '9:0'];

describe('--judge-failed-only --retry-invalid-judge-responses', () => {
  it('moves the flagged rows out of --rollouts into its sidecar, then recovers them with the judge failures', async () => {
    const f = run1();
    const { error, lines: out } = await recover(f);
    expect(error).toBeNull();
    expect(out).toContain(
      `Recovery mode: moved 2 row(s) flagged invalid_judge_response out of ${f.rollouts} into ${f.rolloutsSidecar} as judge_invalid, to be judged again`,
    );
    expect(out).toContain(`Recovery mode: seeded 6 successful rollout(s) into ${f.output}`);
    expect(sortedKeys(f.rollouts)).toEqual(['0:0', '1:0', '2:0', '3:0', '4:0', '5:0']);
    const moved = rows(f.rolloutsSidecar).slice(2);
    expect(keys(moved)).toEqual(['6:0', '7:0']);
    for (const r of moved) expect(r).toMatchObject({ _ng_failure_class: 'judge_invalid', _ng_migrated_invalid_judge_response: true });
    // Every key once in the output; the recovered ones re-scored (the reference server grades them 1.0).
    expect(sortedKeys(f.output)).toEqual(ALL);
    for (const r of rows(f.output).filter((r) => (r._ng_task_index as number) >= 6)) expect(r.reward).toBe(1);
    expect(readFileSync(f.outputSidecar, 'utf8')).toBe('');
  });

  it('without the flag nothing moves: flagged rows are seeded as scored rows, judge_invalid rows are not recovered', async () => {
    const f = run1();
    const rolloutsBefore = readFileSync(f.rollouts, 'utf8');
    const { error, lines: out } = await recover(f, { retryInvalidJudgeResponses: false });
    expect(error).toBeNull();
    expect(out.some((l) => l.includes('moved'))).toBe(false);
    expect(readFileSync(f.rollouts, 'utf8')).toBe(rolloutsBefore);
    expect(sortedKeys(f.output)).toEqual(ALL.filter((k) => k !== '9:0'));
    expect(rows(f.output).find((r) => r._ng_task_index === 6)).toMatchObject({ invalid_judge_response: true, reward: 0 });
  });

  it("--append into the run's own --rollouts: every key ends in it once; a second run changes nothing", async () => {
    const f = run1();
    const own = { ...f, output: f.rollouts, outputSidecar: f.rolloutsSidecar };
    expect((await recover(own, { append: true })).error).toBeNull();
    expect(sortedKeys(f.rollouts)).toEqual(ALL);
    const after = { rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.rolloutsSidecar, 'utf8') };
    expect((await recover(own, { append: true })).error).toBeNull();
    expect({ rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.rolloutsSidecar, 'utf8') }).toEqual(after);
  });

  it(
    'a worker SIGKILLed between the two renames of the move: the next worker completes it, no row lost or doubled',
    { timeout: 180_000 },
    async () => {
      const calm = run1();
      expect((await recover(calm)).error).toBeNull();

      const f = run1();
      const opts = {
        inputs: f.inputs,
        rollouts: f.rollouts,
        output: f.output,
        servers: [`rs=${rs().url}`],
        judgeFailedOnly: true,
        retryInvalidJudgeResponses: true,
        maxAttempts: 1,
      };
      const doomed = await startWorkerProcess({ ...temporal.env, REVERIFY_TEST_KILL_MOVE_AT: 'sidecar-replaced' });
      const running = runCommand(opts, { worker: false, heartbeatTimeoutMs: 3000 }, captureIo());
      const died = await new Promise<string | null>((resolve) => doomed.once('exit', (_code, signal) => resolve(signal)));
      expect(died).toBe('SIGKILL');
      // Killed with the new sidecar in place and the old --rollouts: both hold rows 6 and 7 for now.
      expect(keys(rows(f.rolloutsSidecar))).toEqual(['8:0', '9:0', '6:0', '7:0']);
      expect(lines(f.rollouts)).toHaveLength(8);
      const worker = await startWorkerProcess(temporal.env);
      try {
        expect((await running).done).toBe(4);
      } finally {
        await sigkill(worker);
      }
      const same = (path: string) => lines(path).map((l) => l.replaceAll(f.dir, calm.dir));
      expect(same(f.rollouts)).toEqual(lines(calm.rollouts));
      expect(same(f.rolloutsSidecar)).toEqual(lines(calm.rolloutsSidecar));
      expect(sortedKeys(f.output)).toEqual(ALL);
      expect(lines(f.output).map(withoutOperationId).sort()).toEqual(lines(calm.output).map(withoutOperationId).sort());
    },
  );
});
