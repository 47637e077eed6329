/**
 * Issue 29 items 3 and 4, through the real `reverify run` as a subprocess against a scripted judge
 * that fails a key's first `t % 4` attempts (task t): the `🚨 … rollout dropped from the score`
 * lines are one per rollout missing from the score at the end (a run with re-judgment rounds prints
 * none for the failures a later round scores; a single pass prints them as they are committed, as
 * NeMo Gym does), and the end (the `Incomplete:` lines, the coverage block, the exit status) is the
 * same for the same files whatever path led there: a fresh run with rounds, `--no-rejudge` then
 * `--resume`, or `--no-rejudge` three times.
 */
import { describe, expect, it } from 'vitest';
import { DROPPED_FROM_SCORE } from '../../src/contract/dropped-row.js';
import { runCli, type CliOutcome } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('end-alarms');
const server = closedAfterEach(startScriptedServer);

/** A judge that fails the first `t % 4` attempts of each key of task t (attempts counted by the server). */
function flakyJudge() {
  return server({
    aggregate: emptyMetrics,
    verify: (row, attempt) =>
      attempt < (row._ng_task_index as number) % 4
        ? reward(0.0, { _ng_failure_class: 'judge_failed', _ng_failure_judge_error: 'JudgeError: x' })
        : reward(1.0),
  });
}

/** 16 tasks x 2 rollouts: 8 keys never fail, 8 fail once, 8 twice, 8 three times (the cap). */
async function fixture(name: string) {
  const rs = await flakyJudge();
  const d = await sampleRun(tempDir(), rs.port, { tasks: 16, repeats: 2 });
  const run = (...flags: string[]) =>
    runCli([...runArgs(d), '--batch-size', '5', '--rejudge-delay', '0', ...flags], { ...temporal.env, NEMO_GYM_MAX_ROLLOUT_ATTEMPTS: '3' });
  return { name, d, run };
}

/** What a run's end says, with its directory written `<dir>`. */
function endOf(r: CliOutcome, dir: string) {
  const lines = r.stdout.split('\n').map((l) => l.split(dir).join('<dir>'));
  const missing = /, (\d+) still missing from the score/.exec(lines.find((l) => l.startsWith('Rollouts: ')) ?? '');
  return {
    code: r.code,
    alarms: lines.filter((l) => l.startsWith(DROPPED_FROM_SCORE)).length,
    missing: missing ? Number(missing[1]) : NaN,
    incomplete: lines.filter((l) => l.startsWith('Incomplete:')),
    // The coverage block but its last count (rows this invocation appended).
    coverage: lines
      .slice(lines.findIndex((l) => l.startsWith('Coverage (')))
      .slice(0, 4)
      .map((l) => l.replace(/; \d+ outcome row\(s\) recorded by this run$/, '')),
    lines,
  };
}

const AT_CAP = [
  'Incomplete: 8 rollout(s) still failed after 3 attempt(s), the attempt cap (their last attempt is in <dir>/out_failures.jsonl); ' +
    'to try them again, run the same command with --resume --extend-attempts N (the attempt cap is saved with the run)',
];

describe('the end of a run: alarms, Incomplete lines, coverage and exit status agree', () => {
  it('the same files by three paths end the same; one 🚨 line per rollout missing at the end', async () => {
    // A fresh run with rounds: 24 failures in round 1, 16 in round 2, 8 in round 3; 8 missing.
    const a = await fixture('rounds');
    const fresh = endOf(await a.run(), a.d.output.replace(/\/out\.jsonl$/, ''));
    expect(fresh.code, fresh.lines.join('\n')).toBe(3);
    // Rounds 2 and 3 announced, once each; the attempts add up (32 + 24 + 16, 48 failed).
    const announced = fresh.lines.filter((l) => l.startsWith('Re-judging:')).map((l) => /round (\d) \(of at most 3\)/.exec(l)?.[1]);
    expect(announced).toEqual(['2', '3']);
    expect(fresh.lines.find((l) => l.startsWith('Rollouts: '))).toContain('(72 attempts, 48 of them in the failures sidecar)');
    expect([fresh.alarms, fresh.missing]).toEqual([8, 8]);
    expect(fresh.incomplete).toEqual(AT_CAP);
    expect(fresh.coverage[3]).toContain('not complete: 8 rollout(s) at the attempt cap are missing from the score');
    expect(fresh.lines.some((l) => /100(\.0)?% complete/.test(l))).toBe(false);

    // --no-rejudge: one pass; its 24 failures are each printed as committed, and advised --resume.
    const b = await fixture('no-rejudge then resume');
    const bDir = b.d.output.replace(/\/out\.jsonl$/, '');
    const single = endOf(await b.run('--no-rejudge'), bDir);
    expect(single.code).toBe(3);
    expect([single.alarms, single.missing]).toEqual([24, 24]);
    expect(single.incomplete).toEqual([
      'Incomplete: 24 rollout(s) still missing from the score, below the attempt cap (failed, not persisted or not sent; see <dir>/out_failures.jsonl); ' +
        'to try them again, run the same command with --resume',
    ]);
    expect(single.coverage[3]).toContain('(not complete: run the same command with --resume)');
    // Then --resume with rounds: the files of the fresh run, and its end.
    const resumed = endOf(await b.run('--resume'), bDir);
    expect(resumed.code).toBe(3);
    expect([resumed.alarms, resumed.missing]).toEqual([8, 8]);
    expect(resumed.incomplete).toEqual(AT_CAP);
    expect(resumed.coverage).toEqual(fresh.coverage);

    // --no-rejudge three times (NeMo Gym's way): the same end again.
    const c = await fixture('three single passes');
    const cDir = c.d.output.replace(/\/out\.jsonl$/, '');
    const first = endOf(await c.run('--no-rejudge'), cDir);
    const second = endOf(await c.run('--no-rejudge', '--resume'), cDir);
    const third = endOf(await c.run('--no-rejudge', '--resume'), cDir);
    expect([first, second, third].map((e) => [e.code, e.alarms, e.missing])).toEqual([
      [3, 24, 24],
      [3, 16, 16],
      [3, 8, 8],
    ]);
    expect(second.incomplete[0]).toMatch(/^Incomplete: 16 rollout\(s\) still missing from the score, below the attempt cap .* --resume$/);
    expect(third.incomplete).toEqual(AT_CAP);
    expect(third.coverage).toEqual(fresh.coverage);
  });
});
