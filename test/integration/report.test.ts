/**
 * `reverify report` on a demo-sized sample run whose stored rewards were edited to force flips
 * (the reference resources server grades; judge failures at 10 %): the report written at the end
 * of `reverify run`, its --json numbers against counts computed here from the files, the HTML in
 * real headless Chromium (charts drawn, no console error, no request), and the report from the
 * files alone once the Temporal server has no run for the output.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { workflowUiUrl } from '../../src/temporal/dev-server/index.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { buildReport, writeReport } from '../../src/cli/report-command.js';
import { CHART_IDS } from '../../src/report/html.js';
import type { ReportData } from '../../src/report/report-data.js';
import { chartsDrawn, openPage } from '../helpers/report-page.js';
import { runCli } from '../helpers/cli-process.js';
import { editRewards, pairedExpected } from '../helpers/paired-expected.js';
import { projectRoot } from '../helpers/worker-process.js';
import { readRows, runReverify, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('report');
const rs = useReferenceServer({ port: 0, judgeFailRate: 0.1, seed: 7, latencyMs: 2 });

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${String(r._ng_task_index)}:${String(r._ng_rollout_index)}`;
const agentOf = (r: Row) => (r.agent_ref as { name: string }).name;

interface Run {
  dir: string;
  output: string;
  rollouts: string;
  inputs: string;
  config: string;
  printed: string[];
}

let run: Run;

beforeAll(async () => {
  const dir = tempDir();
  const d = await sampleRun(dir, rs().port, { tasks: 30, repeats: 4 });
  editRewards(d.rolloutsPath);
  const { error, lines } = await runReverify({
    inputs: d.inputsPath,
    rollouts: d.rolloutsPath,
    output: d.output,
    configs: [d.config],
    concurrency: 6,
    batchSize: 16,
    order: 'random',
    orderSeed: 4242,
  });
  expect(error).toBeNull();
  run = { dir, output: d.output, rollouts: d.rolloutsPath, inputs: d.inputsPath, config: d.config, printed: lines };
});

describe('reverify report', () => {
  it('is written at the end of the run; --json carries the flips, agreement and failures counted from the files', async () => {
    const html = join(run.dir, 'out_report.html');
    expect(run.printed).toContain(`Report: ${html}`);
    expect(existsSync(html)).toBe(true);

    const cli = await runCli(['report', '-o', run.output, '--json'], temporal.env);
    expect(cli.stderr).toContain(`Report: ${html}`);
    expect(cli.code).toBe(0);
    const data = JSON.parse(cli.stdout) as ReportData;

    // Counted here, independently, from the edited --rollouts and the main output.
    const old = new Map(readRows(run.rollouts).map((r) => [keyOf(r), r.reward]));
    const expected: Record<
      string,
      { up: number; down: number; changed: number; noOld: number; paired: number; oldSum: number; newSum: number }
    > = {};
    const flipped: string[] = [];
    const table = { pp: 0, pf: 0, fp: 0, ff: 0 };
    const main = readRows(run.output);
    for (const r of main) {
      const e = (expected[agentOf(r)] ??= { up: 0, down: 0, changed: 0, noOld: 0, paired: 0, oldSum: 0, newSum: 0 });
      const o = old.get(keyOf(r));
      const n = r.reward as number;
      if (typeof o !== 'number') {
        e.noOld++;
        continue;
      }
      e.paired++;
      e.oldSum += o;
      e.newSum += n;
      table[`${o >= 0.5 ? 'p' : 'f'}${n >= 0.5 ? 'p' : 'f'}`]++;
      if (o === n) continue;
      flipped.push(keyOf(r));
      if (o === 0 && n === 1) e.up++;
      else if (o === 1 && n === 0) e.down++;
      else e.changed++;
    }
    const total = Object.values(expected).reduce((s, e) => s + e.up + e.down + e.changed, 0);
    expect(total).toBeGreaterThan(10);
    expect(data.historyUnavailable).toBeNull();
    expect(data.totals.newRows).toBe(main.length);
    expect(data.totals.oldRows).toBe(120);
    expect(data.totals.oldOnly).toBe(120 - main.length);
    expect(data.totals.flips.total).toBe(total);
    expect(data.totals.passTable).toEqual(table);
    const n = table.pp + table.pf + table.fp + table.ff;
    const pOld = (table.pp + table.pf) / n;
    const pNew = (table.pp + table.fp) / n;
    const pe = pOld * pNew + (1 - pOld) * (1 - pNew);
    expect(data.totals.kappa).toBeCloseTo(((table.pp + table.ff) / n - pe) / (1 - pe), 12);
    expect(data.agents.map((a) => a.agent)).toEqual(Object.keys(expected).sort());
    for (const a of data.agents) {
      const e = expected[a.agent];
      expect([a.flips, a.noOld, a.paired]).toEqual([
        { up: e.up, down: e.down, changed: e.changed, total: e.up + e.down + e.changed },
        e.noOld,
        e.paired,
      ]);
      expect(a.meanReward.delta).toBeCloseTo((e.newSum - e.oldSum) / e.paired, 12);
      expect(a.meanReward.ci!.low).toBeLessThanOrEqual(a.meanReward.delta!);
      expect(a.meanReward.ci!.high).toBeGreaterThanOrEqual(a.meanReward.delta!);
      expect(a.keyMetrics.find((m) => m.name === 'mean/reward')).toBeDefined();
    }
    expect(data.flipped.map((f) => f.key).sort()).toEqual(flipped.sort());
    const ui = temporal.env.TEMPORAL_UI_URL;
    expect(data.runUrl).toBe(ui ? workflowUiUrl(ui, temporal.namespace, workflowIdForOutput(run.output)) : null);

    // Judge failures: the rounds of the history against the failures sidecar.
    const side = readRows(join(run.dir, 'out_failures.jsonl'));
    expect(side.length).toBeGreaterThan(0);
    expect(data.timeline!.rounds.reduce((s, r) => s + r.judgeFailed, 0)).toBe(side.length);
    expect(data.sidecarCounts).toEqual({ rows: side.length, byClass: { judge_failed: side.length } });
    expect(data.timeline!.progress.at(-1)!.rows).toBe(120);
    expect(data.timeline!.latency.counts.reduce((a, b) => a + b, 0)).toBe(120);

    // Reproducible: a second report has the same numbers.
    expect((await buildReport({ output: run.output })).agents).toEqual(data.agents);
  });

  it('carries the paired differences clustered by task, the clustered McNemar test, the tasks that flipped and the live estimate replayed', async () => {
    const data = await buildReport({ output: run.output });
    const main = readRows(run.output);
    const { stats, tasksUp, tasksDown } = pairedExpected(readRows(run.rollouts), main);
    expect(tasksUp.length + tasksDown.length).toBeGreaterThan(5);
    for (const s of [...data.paired.agents, data.paired.all]) {
      const e = stats[s.agent];
      expect([s.rows, s.mcnemar.fp, s.mcnemar.pf], s.agent).toEqual([e.rows, e.up, e.down]);
      expect(s.delta!.mean).toBeCloseTo(e.mean, 12);
      expect(s.delta!.se).toBeCloseTo(e.se, 12);
      expect(s.delta!.hi - s.delta!.mean).toBeCloseTo(1.959964 * e.se, 5);
      if (e.x2 === null) expect(s.mcnemar.statistic).toBeNull();
      else expect(s.mcnemar.statistic).toBeCloseTo(e.x2, 12);
    }
    expect(
      data.tasks
        .filter((t) => t.up > 0)
        .map((t) => `${t.task}/${t.agent}`)
        .sort(),
    ).toEqual(tasksUp);
    expect(
      data.tasks
        .filter((t) => t.down > 0)
        .map((t) => `${t.task}/${t.agent}`)
        .sort(),
    ).toEqual(tasksDown);

    // The live estimate, replayed in the run's random order (its seed from the history): every row
    // with both verdicts in, ending at the exact delta over them.
    const h = data.estimateHistory!;
    expect(h.order).toEqual({ kind: 'random', seed: 4242 });
    expect(h.confidence).toBe(0.95);
    expect(h.rows).toBe(stats.all.rows);
    const last = h.points.at(-1)!;
    expect(last.rows).toBe(stats.all.rows);
    expect(last.all!.estimate).toBeCloseTo(stats.all.mean, 12);
    expect(last.all!.hi - last.all!.lo).toBeLessThan(1e-9);
    for (const p of h.points) expect(p.all!.lo <= stats.all.mean + 1e-9 && stats.all.mean - 1e-9 <= p.all!.hi).toBe(true);
    expect(h.points[0].all!.hi - h.points[0].all!.lo).toBeGreaterThan(0.5);
  });

  it('renders its charts in headless Chromium with no console error and no request; saves a screenshot', async () => {
    const html = join(run.dir, 'out_report.html');
    const { context, page, problems } = await openPage(html);
    try {
      const charts = await chartsDrawn(page, CHART_IDS);
      for (const c of charts) {
        expect(c.canvas, c.id).toBe(true);
        expect(c.points, c.id).toBeGreaterThan(0);
        expect(c.painted, c.id).toBeGreaterThan(1000);
      }
      expect(await page.locator('#flipped-table tr').count()).toBeGreaterThan(10);
      // The statistics: a row per agent and one for all agents; the task lists closed until clicked.
      const data = await buildReport({ output: run.output });
      expect(await page.locator('#paired-table tr').count()).toBe(data.agents.length + 2);
      const ups = data.tasks.filter((t) => t.up > 0).length;
      expect(await page.locator('#tasks-up summary').textContent()).toMatch(new RegExp(`^${ups} task\\(s\\) with rows flipped 0→1`));
      expect(await page.locator('#tasks-up table').isVisible()).toBe(false);
      await page.locator('#tasks-up summary').click();
      expect(await page.locator('#tasks-up tr').count()).toBe(ups + 1);
      expect(await page.locator('#estimate-history-table tr').count()).toBeGreaterThan(2);
      const out = join(projectRoot, 'test-output');
      mkdirSync(out, { recursive: true });
      await page.screenshot({ path: join(out, 'report.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('works from the files alone when the Temporal server has no run for the output, and says so', async () => {
    // A copy elsewhere: its output path names no run on the server; the earlier report names --rollouts.
    const copy = tempDir();
    for (const f of ['out.jsonl', 'out_failures.jsonl', 'out_aggregate_metrics.json', 'out_report.html'])
      copyFileSync(join(run.dir, f), join(copy, f));
    const cli = await runCli(['report', '-o', join(copy, 'out.jsonl'), '--json'], temporal.env);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toContain('History part unavailable: the Temporal server at');
    const data = JSON.parse(cli.stdout) as ReportData;
    expect(data.rollouts).toBe(run.rollouts);
    expect(data.timeline).toBeNull();
    expect(data.historyUnavailable).toContain('has no run');
    const full = await buildReport({ output: run.output });
    expect(data.totals).toEqual(full.totals);
    expect(data.agents).toEqual(full.agents);
    // The run's order (random, its seed in the history) is unknown: the live estimate is replayed in file order, to the same end.
    expect(data.paired).toEqual(full.paired);
    expect(data.estimateHistory!.order).toEqual({ kind: 'file' });
    expect(data.estimateHistory!.points.at(-1)!.all!.estimate).toBeCloseTo(full.estimateHistory!.points.at(-1)!.all!.estimate, 12);

    // Without an earlier report, it asks for --rollouts in one line (exit 1).
    const bare = tempDir();
    copyFileSync(join(run.dir, 'out.jsonl'), join(bare, 'out.jsonl'));
    const refused = await buildReport({ output: join(bare, 'out.jsonl') }).then(() => null, describeFailure);
    expect(refused?.code).toBe(1);
    expect(refused?.line).toMatch(/^Error: the Temporal server has no run for .* pass --rollouts <path>$/);
    const given = await buildReport({ output: join(bare, 'out.jsonl'), rollouts: run.rollouts });
    expect(given.totals.flips).toEqual(full.totals.flips);
  });

  it("never overwrites a file it reads: --html naming the run's --rollouts (or its output, under another name) is refused", async () => {
    const before = readFileSync(run.rollouts);
    const cli = await runCli(['report', '-o', run.output, '--html', run.rollouts], temporal.env);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe('');
    expect(cli.stderr.trim()).toBe(
      `Error: the run's --rollouts '${run.rollouts}' is also the HTML report, which it would overwrite: choose another --html`,
    );
    expect(readFileSync(run.rollouts).equals(before)).toBe(true);
    // By file identity: a symlink to the main output is the main output.
    const link = join(tempDir(), 'link.html');
    symlinkSync(run.output, link);
    const output = readFileSync(run.output);
    const refused = await writeReport({ output: run.output, html: link }).then(() => null, describeFailure);
    expect(refused).toEqual({
      line: `Error: the run's main output '${run.output}' is also the HTML report ('${link}'), which it would overwrite: choose another --html`,
      code: 1,
    });
    expect(readFileSync(run.output).equals(output)).toBe(true);
    // A directory in the way is one line too, not a raw EISDIR as "the run failed" (issue 35).
    const dir = tempDir();
    const inTheWay = await writeReport({ output: run.output, html: dir }).then(() => null, describeFailure);
    expect(inTheWay).toEqual({ line: `Error: '${dir}' (the HTML report) is a directory, not a file: choose another --html`, code: 1 });
  });

  it("compares a --judge-failed-only run's recovered rows with the rewards of its input rows (the --rollouts sidecar)", async () => {
    // The first run's outputs as the rollouts of a recovery run: rollouts.jsonl and rollouts_failures.jsonl.
    const dir = tempDir();
    const rollouts = join(dir, 'rollouts.jsonl');
    const inputSidecar = join(dir, 'rollouts_failures.jsonl');
    copyFileSync(run.output, rollouts);
    copyFileSync(join(run.dir, 'out_failures.jsonl'), inputSidecar);
    const output = join(dir, 'recovered.jsonl');
    const { error, lines } = await runReverify({ inputs: run.inputs, rollouts, output, configs: [run.config], judgeFailedOnly: true });
    expect(error).toBeNull();
    expect(lines).toContain(`Report: ${join(dir, 'recovered_report.html')}`);

    const data = await buildReport({ output });
    expect(data.oldSidecar).toBe(inputSidecar);
    // Counted here: the input rows' rewards (the sidecar's, then --rollouts'), against the output.
    const old = new Map<string, unknown>();
    for (const r of [...readRows(inputSidecar), ...readRows(rollouts)]) old.set(keyOf(r), r.reward);
    const flips = { up: 0, down: 0, changed: 0 };
    for (const r of readRows(output)) {
      const o = old.get(keyOf(r));
      if (o === r.reward) continue;
      if (o === 0 && r.reward === 1) flips.up++;
      else if (o === 1 && r.reward === 0) flips.down++;
      else flips.changed++;
    }
    expect(flips.up).toBeGreaterThan(0);
    expect(data.totals.flips).toEqual({ ...flips, total: flips.up + flips.down + flips.changed });
    expect(data.totals.noOld).toBe(0);
  });
});
