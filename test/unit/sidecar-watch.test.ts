/** The sidecar reader behind the "dropped from the score" lines: whole lines only, each once, counted by class. */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coverageReport } from '../../src/contract/coverage-report.js';
import { missingAlarms } from '../../src/cli/missing-alarms.js';
import { SidecarWatch } from '../../src/cli/sidecar-watch.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-sidecar-watch-');

const row = (task: number, cls: string) => JSON.stringify({ _ng_task_index: task, _ng_rollout_index: 0, _ng_failure_class: cls }) + '\n';

describe('SidecarWatch', () => {
  it('reads rows past the opening length once each, waits for a cut-off line to end, and counts classes', async () => {
    const path = join(freshDir(), 'out_failures.jsonl');
    const before = row(1, 'judge_failed'); // an earlier run's row: not this run's
    writeFileSync(path, before);
    const watch = new SidecarWatch(path, before.length);
    expect(await watch.take()).toEqual([]);
    const second = row(2, 'transient');
    appendFileSync(path, row(2, 'judge_failed') + second.slice(0, 10));
    const first = await watch.take();
    expect(first).toHaveLength(1);
    expect(first[0]).toContain('"_ng_task_index": 2} class=judge_failed error=');
    appendFileSync(path, second.slice(10) + '\n' + row(3, 'judge_failed'));
    const next = await watch.take();
    expect(next.map((l) => /class=(\w+)/.exec(l)![1])).toEqual(['transient', 'judge_failed']);
    expect(await watch.take()).toEqual([]);
    expect([...watch.routed]).toEqual([
      ['judge_failed', 2],
      ['transient', 1],
    ]);
  });

  it('reads only up to the committed length it is given', async () => {
    const path = join(freshDir(), 'out_failures.jsonl');
    writeFileSync(path, row(1, 'a') + row(2, 'b'));
    const watch = new SidecarWatch(path, 0);
    expect(await watch.take(row(1, 'a').length)).toHaveLength(1);
    expect(await watch.take()).toHaveLength(1);
  });

  it('counts but does not print rows before printFrom (a terminal that attached later)', async () => {
    const path = join(freshDir(), 'out_failures.jsonl');
    writeFileSync(path, row(1, 'a') + row(2, 'a') + row(3, 'b'));
    const watch = new SidecarWatch(path, 0, (row(1, 'a') + row(2, 'a')).length);
    expect(await watch.take()).toHaveLength(1);
    expect(watch.routed.get('a')).toBe(2);
  });

  it('an unreadable sidecar gives no lines', async () => {
    const watch = new SidecarWatch(join(freshDir(), 'missing', 'x.jsonl'), 0);
    expect(await watch.take()).toEqual([]);
  });
});

describe('coverageReport', () => {
  it("says nothing when every rollout is scored; else NeMo Gym 0.7.0's two lines, classes sorted by name", () => {
    expect(coverageReport(10, 0, new Map([['judge_failed', 3]]), 's.jsonl')).toEqual([]);
    expect(
      coverageReport(
        8,
        2,
        new Map([
          ['transient', 1],
          ['judge_failed', 4],
        ]),
        's.jsonl',
      ),
    ).toEqual([
      'Rollouts missing from the score: 2 of 10 materialized (4 judge_failed, 1 transient routed this run; see s.jsonl)',
      'Metrics cover: 8 of 10 rollouts',
    ]);
    expect(coverageReport(8, 2, null, 's.jsonl')[0]).toBe('Rollouts missing from the score: 2 of 10 materialized (see s.jsonl)');
  });

  it('deferred (re-judgment rounds): no line as rows come; at the end one per key still missing, from its last row', async () => {
    const dir = freshDir();
    const sidecar = join(dir, 'out_failures.jsonl');
    const output = join(dir, 'out.jsonl');
    const earlier = row(9, 'judge_failed'); // an earlier run's row: not this run's
    writeFileSync(sidecar, earlier);
    const scoredBefore = JSON.stringify({ _ng_task_index: 5, _ng_rollout_index: 0, reward: 1 }) + '\n';
    writeFileSync(output, scoredBefore);
    const watch = new SidecarWatch(sidecar, earlier.length, earlier.length, true);
    // Round 1: keys 1, 2, 3 fail; round 2 scores 1, fails 2 (transient) and 3 again.
    appendFileSync(sidecar, row(1, 'judge_failed') + row(2, 'judge_failed') + row(3, 'judge_failed'));
    expect(await watch.take()).toEqual([]);
    const mainAtRejudge = scoredBefore.length;
    appendFileSync(output, JSON.stringify({ _ng_task_index: 1, _ng_rollout_index: 0, reward: 1 }) + '\n');
    appendFileSync(sidecar, row(2, 'transient') + row(3, 'judge_failed'));
    expect(await watch.take()).toEqual([]);
    expect(watch.routed.get('judge_failed')).toBe(4);
    const lines = await missingAlarms(watch, output, mainAtRejudge);
    expect(lines.map((l) => /"_ng_task_index": (\d+)} class=(\w+)/.exec(l)!.slice(1).join(' '))).toEqual(['2 transient', '3 judge_failed']);
    // No round began: every key of this run's rows is missing.
    expect(await missingAlarms(watch, output, null)).toHaveLength(3);
  });
});
