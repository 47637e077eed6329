import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonlLines } from '../../src/io/jsonl-lines.js';
import { historyTimeline } from '../../src/report/history-timeline.js';
import { reportData } from '../../src/report/report-data.js';
import { forEachRowVerdict, partText, rowVerdict, type RowVerdict } from '../../src/report/row-verdicts.js';
import { flipOf, joinVerdicts, MISSING_LISTED_MAX, TASKS_LISTED_MAX, type VerdictJoin } from '../../src/report/verdict-join.js';
import { recordedBatch } from '../helpers/recorded-batch.js';

const row = (t: number, r: number, reward: unknown, agent = 'a') =>
  JSON.stringify({ _ng_task_index: t, _ng_rollout_index: r, agent_ref: { name: agent }, response: { x: 'big' }, reward });

describe('verdict join', () => {
  it('reads a row: key, task, agent, reward (booleans as 0/1, else NaN)', () => {
    expect(rowVerdict(row(3, 1, true, 'z'))).toEqual({ task: '3', rollout: '1', agent: 'z', reward: 1 });
    expect(rowVerdict(row(3, 1, 'x'))?.reward).toBeNaN();
    expect(rowVerdict('{"reward": 1}')).toBeNull();
    expect(rowVerdict('not json')).toBeNull();
  });
  it('classifies flips', () => {
    expect(flipOf(0, 1)).toBe('up');
    expect(flipOf(1, 0)).toBe('down');
    expect(flipOf(0.5, 0.25)).toBe('changed');
    expect(flipOf(1, 1)).toBeNull();
    expect(flipOf(NaN, 1)).toBeNull();
  });
  it('counts flips per agent and per task, rows without old verdicts, and old-only keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'report-join-'));
    const old = join(dir, 'old.jsonl');
    const out = join(dir, 'out.jsonl');
    writeFileSync(old, [row(0, 0, 0), row(0, 1, 1), row(1, 0, 1, 'b'), row(1, 1, 0.5, 'b'), row(2, 0, 1, 'b'), ''].join('\n'));
    writeFileSync(out, [row(0, 0, 1), row(0, 1, 1), row(1, 0, 0, 'b'), row(1, 1, 0.75, 'b'), row(3, 0, 1, 'b')].join('\n') + '\n');
    const j = await joinVerdicts({ rollouts: old, oldSidecar: null, output: out }, dir);
    expect(j.oldRows).toBe(5);
    expect(j.newRows).toBe(5);
    expect(j.oldOnly).toBe(1);
    expect(j.oldOnlyKeys).toEqual(['2:0']);
    expect(j.agents.map((a) => [a.agent, a.flips, a.noOld, Array.from(a.oldRewards), Array.from(a.newRewards)])).toEqual([
      ['a', { up: 1, down: 0, changed: 0 }, 0, [0, 1], [1, 1]],
      ['b', { up: 0, down: 1, changed: 1 }, 1, [1, 0.5], [0, 0.75]],
    ]);
    expect(j.tasks.map((t) => [t.task, t.up, t.down, t.changed])).toEqual([
      ['1', 0, 1, 1],
      ['0', 1, 0, 0],
    ]);
    expect(j.flipped.map((f) => f.key)).toEqual(['0:0', '1:0', '1:1']);
    const data = reportData({
      join: j,
      keyMetrics: { a: { 'mean/reward': 1, 'mean/tokens': 3 } },
      paths: { output: out, rollouts: old, oldSidecar: null, sidecar: '', metrics: null },
      workflowId: 'w',
      runUrl: null,
      historyUnavailable: 'gone',
      sidecar: null,
      timeline: null,
      estimateHistory: null,
    });
    expect(data.totals.flips).toEqual({ up: 1, down: 1, changed: 1, total: 3 });
    // Pass ≥ 0.5: a: (f→p, p→p); b: (p→f, p→p).
    expect(data.totals.passTable).toEqual({ pp: 2, pf: 1, fp: 1, ff: 0 });
    expect(data.agents[0].meanReward).toMatchObject({ old: 0.5, new: 1, delta: 0.5 });
    expect(data.agents[0].keyMetrics).toEqual([
      { name: 'mean/reward', new: 1, old: 0.5, delta: 0.5 },
      { name: 'mean/tokens', new: 3, old: null, delta: null },
    ]);
  });
});

describe('verdict join in flat memory (an external sort of one record per row)', () => {
  const raw = (t: string, r: string, reward: unknown, agent = 'a') =>
    `{"_ng_task_index":${t},"_ng_rollout_index":${r},"agent_ref":{"name":"${agent}"},"reward":${JSON.stringify(reward)}}`;
  const files = (lines: { old: string[]; sidecar?: string[]; out: string[] }) => {
    const dir = mkdtempSync(join(tmpdir(), 'report-join-'));
    writeFileSync(join(dir, 'old.jsonl'), lines.old.join('\n') + '\n');
    if (lines.sidecar) writeFileSync(join(dir, 'old_failures.jsonl'), lines.sidecar.join('\n') + '\n');
    writeFileSync(join(dir, 'out.jsonl'), lines.out.join('\n') + '\n');
    return {
      dir,
      files: {
        rollouts: join(dir, 'old.jsonl'),
        oldSidecar: lines.sidecar ? join(dir, 'old_failures.jsonl') : null,
        output: join(dir, 'out.jsonl'),
      },
    };
  };
  const plain = (j: VerdictJoin) => ({
    ...j,
    agents: j.agents.map((a) => ({ ...a, oldRewards: Array.from(a.oldRewards), newRewards: Array.from(a.newRewards) })),
  });

  it('joins keys as Python compares them; the last old row of a key wins; its first new row takes it', async () => {
    const { dir, files: f } = files({
      sidecar: [raw('5', '0', 1), raw('6', '0', 0)],
      old: [raw('1.0', 'true', 0), raw('"1"', '1', 1), raw('5', '0', 0), raw('2', '0', 1), raw('2', '0', 0), raw('null', '0', 1)],
      out: [
        raw('1', '1', 1),
        raw('1', '1', 0),
        raw('"1"', '1', 1),
        raw('5', '0', 1),
        raw('6', '0', 1),
        raw('2', '0', 1),
        raw('null', '0', 0),
      ],
    });
    const j = await joinVerdicts(f, dir);
    // Keys: (1,1) paired 0→1 and its second row has no old; ("1",1) 1→1; (5,0) --rollouts' 0 wins
    // over the sidecar's 1: 0→1; (6,0) only in the sidecar: 0→1; (2,0) the later 0 wins: 0→1. A null index is no key.
    expect(j.oldRows).toBe(5);
    expect(j.newRows).toBe(6);
    expect(j.oldOnly).toBe(0);
    expect(j.agents.map((a) => [a.agent, a.rows, a.noOld, a.flips])).toEqual([['a', 6, 1, { up: 4, down: 0, changed: 0 }]]);
    expect(j.flipped.map((f) => f.key)).toEqual(['1:1', '2:0', '5:0', '6:0']);
    const spilled = await joinVerdicts(f, dir, { maxRecords: 2 });
    expect(plain(spilled)).toEqual(plain(j));
    expect(readdirSync(dir).sort()).toEqual(['old.jsonl', 'old_failures.jsonl', 'out.jsonl']);
  });

  it(`lists the first ${TASKS_LISTED_MAX} tasks with flips, most flips first, and counts the rest`, async () => {
    const old: string[] = [];
    const out: string[] = [];
    const tasks = TASKS_LISTED_MAX + 5;
    for (let t = 0; t < tasks; t++) {
      old.push(raw(String(t), '0', 0), raw(String(t), '1', 1));
      out.push(raw(String(t), '0', 1), raw(String(t), '1', t === 7 ? 0 : 1));
    }
    const { dir, files: f } = files({ old, out });
    const j = await joinVerdicts(f, dir, { maxRecords: 5_000 });
    expect(j.tasks.length).toBe(TASKS_LISTED_MAX);
    expect(j.tasksMore).toBe(5);
    expect(j.tasks.slice(0, 3).map((t) => [t.task, t.up, t.down])).toEqual([
      ['7', 1, 1],
      ['0', 1, 0],
      ['1', 1, 0],
    ]);
    // 7, then 0–6, then 8 onwards: the last listed is task TASKS_LISTED_MAX − 1.
    expect(j.tasks[TASKS_LISTED_MAX - 1].task).toBe(String(TASKS_LISTED_MAX - 1));
    expect(j.agents[0].oldRewards.length).toBe(2 * tasks);
  });
});

const batch = recordedBatch;

describe('history timeline', () => {
  it('progress, rows/s, latency and per-round failures from the batches', () => {
    const tl = historyTimeline([batch(0, 0, 2, 8, 2), batch(0, 1, 3, 20, 0), batch(1, 5, 6, 2, 0, 3)])!;
    // Active time: 0–3 s and 5–6 s (no batch ran between 3 and 5 s).
    expect(tl.seconds).toBe(4);
    expect(tl.progress).toEqual([
      { t: 0, rows: 0 },
      { t: 2, rows: 10 },
      { t: 3, rows: 30 },
      { t: 4, rows: 32 },
    ]);
    expect(tl.invocations).toEqual([{ invocation: 1, started: '2026-01-01T00:00:00.000Z', activeSeconds: 4, rows: 32, rowsPerSecond: 8 }]);
    // Rows spread over each batch's activity: their rate integrates back to the row count.
    const width = 4 / tl.rate.length;
    expect(tl.rate.reduce((s, r) => s + r.rowsPerSecond * width, 0)).toBeCloseTo(32, 9);
    expect(tl.rounds).toEqual([
      {
        invocation: 1,
        round: 1,
        batches: 2,
        rows: 30,
        scored: 28,
        failed: 2,
        judgeFailed: 2,
        rejected: 0,
        notPersisted: 0,
        activityRetries: 0,
        throttled: 0,
      },
      {
        invocation: 1,
        round: 2,
        batches: 1,
        rows: 2,
        scored: 2,
        failed: 0,
        judgeFailed: 0,
        rejected: 0,
        notPersisted: 0,
        activityRetries: 2,
        throttled: 0,
      },
    ]);
    expect(tl.latency.counts.reduce((a, b) => a + b, 0)).toBe(32);
    expect(tl.latency.counts[tl.latency.counts.length - 1]).toBe(2);
    expect(tl.latency.meanMs).toBeCloseTo((30 * 100 + 2 * 300) / 32, 9);
  });
  it('is null without batches', () => {
    expect(historyTimeline([])).toBeNull();
  });
  it("counts a stopped batch's rows where they were answered, and each invocation over its own active time", () => {
    // Invocation 1: a batch runs 0–10 s, its worker stops (Ctrl-C) after 40 rows; an hour later the
    // run is attached again and the batch goes on from its checkpoint: 60 more rows in 10 s.
    const held = {
      ...batch(0, 0, 10, 0, 0),
      batch: 0,
      result: { ...batch(0, 0, 10, 0, 0).result, held: true, sofar: { main: 40, failed: 0, dropped: 0 } },
    };
    const after = { ...batch(0, 3600, 3610, 100, 0), batch: 0, result: { ...batch(0, 3600, 3610, 100, 0).result, carried: 40 } };
    // Invocation 2 (--resume after the end): 10 rows in 5 s, a day later.
    const resumed = { ...batch(0, 86400, 86405, 10, 0), batch: 0, invocation: 1 };
    const tl = historyTimeline([held, after, resumed])!;
    expect(tl.seconds).toBe(25);
    expect(tl.progress.map((p) => p.rows)).toEqual([0, 40, 100, 110]);
    expect(tl.invocations.map((v) => [v.invocation, v.activeSeconds, v.rows, v.rowsPerSecond])).toEqual([
      [1, 20, 100, 5],
      [2, 5, 10, 2],
    ]);
    expect(tl.rowsPerSecond).toBe(4.4);
    // One batch per invocation in the rounds table (the held launch is not a batch of its own).
    expect(tl.rounds.map((r) => [r.invocation, r.round, r.batches, r.rows])).toEqual([
      [1, 1, 1, 100],
      [2, 1, 1, 10],
    ]);
  });
});

describe('forEachRowVerdict (byte scan with rowVerdict on the text as fallback)', () => {
  it('reads every tricky line as rowVerdict does', async () => {
    const lines: (string | Buffer)[] = [
      row(0, 0, 1),
      row(0, 1, false, 'b'),
      row(1, 0, '1'),
      row(1, 1, null),
      '{"_ng_task_index":2,"_ng_rollout_index":0,"agent_ref":{"name":"q\\"x"},"reward":0.25,"reward":0.75}', // repeated: the last wins
      '{"_ng_task_\\u0069ndex":3,"_ng_rollout_index":0,"reward":1}', // an escaped key
      '{"_ng_task_index":12345678901234567891,"_ng_rollout_index":0,"reward":1}',
      '{"_ng_task_index":1.5,"_ng_rollout_index":"a b","reward":1e0}',
      '{"_ng_task_index": 4 ,"_ng_rollout_index":0,"agent_ref":null,"reward":true}',
      '{"_ng_task_index":5,"_ng_rollout_index":0,"agent_ref":{"name":7}}',
      '{"_ng_task_index":6,"reward":1}', // keyless
      '{"reward":1}',
      '',
      '  ',
      'not json',
      '[1]',
      Buffer.concat([
        Buffer.from('{"_ng_task_index":7,"_ng_rollout_index":0,"agent_ref":{"name":"'),
        Buffer.from([0xff]),
        Buffer.from('"},"reward":0}'),
      ]),
      '{"_ng_task_index":8,"_ng_rollout_index":0,"note":"a\tb","reward":1}', // JSON.parse refuses the tab, topLevelSpans does not
      row(9, 0, 1) + '\r',
      '{"_ng_task_index":10,"_ng_rollout_index":0,"reward":1',
    ];
    for (const last of ['', row(11, 0, 0), '{"_ng_task_index":12,"_ng_rollout_index":0,"rew']) {
      const dir = mkdtempSync(join(tmpdir(), 'report-join-'));
      const path = join(dir, 'out.jsonl');
      writeFileSync(path, Buffer.concat([...lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')])), Buffer.from(last)]));
      const want = [];
      for await (const l of jsonlLines(path)) {
        if (l.text.trim() === '') continue;
        const v = rowVerdict(l.text);
        if (v) want.push(v);
      }
      const got: RowVerdict[] = [];
      await forEachRowVerdict(path, (v) => {
        got.push({ ...v });
      });
      expect(got).toEqual(want);
      expect(got.map((v) => `${partText(v.task)}:${partText(v.rollout)}`).slice(0, 12)).toEqual([
        '0:0',
        '0:1',
        '1:0',
        '1:1',
        '2:0',
        '3:0',
        '12345678901234567891:0',
        '1.5:"a b"',
        '4:0',
        '5:0',
        '7:0',
        '8:0',
      ]);
      expect(got[4]).toMatchObject({ agent: 'q"x', reward: 0.75 });
    }
  });
});

describe('missing keys', () => {
  it(`lists the first ${MISSING_LISTED_MAX} old keys missing from the main output, in key order, and counts them all`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'report-missing-'));
    const old = join(dir, 'old.jsonl');
    const out = join(dir, 'out.jsonl');
    writeFileSync(old, Array.from({ length: 150 }, (_, t) => row(149 - t, 0, 1)).join('\n') + '\n');
    writeFileSync(out, Array.from({ length: 30 }, (_, t) => row(t * 5, 0, 1)).join('\n') + '\n');
    const j = await joinVerdicts({ rollouts: old, oldSidecar: null, output: out }, dir);
    expect(j.oldOnly).toBe(120);
    expect(j.oldOnlyKeys).toHaveLength(MISSING_LISTED_MAX);
    expect(j.oldOnlyKeys.slice(0, 5)).toEqual(['1:0', '2:0', '3:0', '4:0', '6:0']);
  });
});
