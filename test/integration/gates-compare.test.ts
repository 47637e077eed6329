/**
 * Issue 32 items 5 and 6 through the real `reverify` command (real Temporal dev server, scripted
 * judges): a planted regression (every stored reward is 1; the second judge gives 0 to agent_b's
 * rollouts of tasks 1 and 9, a quarter of its tasks) makes `run --fail-if` and `report --fail-if`
 * exit 5 with the rule's line, a rule that does not hold passes with 0, a bad rule is one line
 * and 1, and `reverify compare` of the two judges' outputs gives the planted difference.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OutputComparison } from '../../src/report/output-comparison.js';
import { runCli, type CliOutcome } from '../helpers/cli-process.js';
import { openForFile } from '../helpers/hooks.js';
import { readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('gates-compare');
const planted = (row: Record<string, unknown>) =>
  (row.agent_ref as { name: string }).name === 'agent_b' && Number(row._ng_task_index) % 8 === 1;
const lenient = openForFile(
  () => startScriptedServer({ aggregate: emptyMetrics, verify: () => reward(1.0) }),
  (s) => s.close(),
);
const strict = openForFile(
  () => startScriptedServer({ aggregate: emptyMetrics, verify: (row) => reward(planted(row) ? 0.0 : 1.0) }),
  (s) => s.close(),
);

const lines = (r: CliOutcome) => (r.stdout + r.stderr).split('\n');
const num = (x: number) => x.toFixed(4).replace(/^-/, '−');

let d: Awaited<ReturnType<typeof sampleRun>>;
let lenientOut: string;
/** The planted delta of agent_b and over all agents (new − old, every old reward 1). */
let deltaB: number;
let deltaAll: number;
let strictRun: CliOutcome;

beforeAll(async () => {
  d = await sampleRun(tempDir(), 0, { tasks: 16, repeats: 4 });
  const rows: Array<Record<string, unknown>> = readRows(d.rolloutsPath).map((r) => ({ ...r, reward: 1.0 }));
  writeFileSync(d.rolloutsPath, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const b = rows.filter((r) => (r.agent_ref as { name: string }).name === 'agent_b');
  deltaB = -b.filter(planted).length / b.length;
  deltaAll = -rows.filter(planted).length / rows.length;
  expect(deltaB).toBeLessThan(-0.1);
  lenientOut = join(tempDir(), 'lenient.jsonl');
  strictRun = await runCli(
    [
      ...runArgs(d),
      '--server',
      strict().flag('mcqa_rs'),
      '--fail-if',
      'agent_a.delta(mean/reward) < -0.02',
      '--fail-if',
      'agent_b.delta(mean/reward).upper < -0.1',
    ],
    temporal.env,
  );
});

const gateLine = (r: CliOutcome, prefix: string) => lines(r).find((l) => l.startsWith(prefix));

describe('--fail-if', () => {
  it('run: exits 5 at the end of the run, with the line of the rule that holds on its final estimate', () => {
    expect(strictRun.code, strictRun.stderr).toBe(5);
    // The run itself completed: its summary and report are written.
    expect(strictRun.stdout).toMatch(/^Report: /m);
    expect(gateLine(strictRun, 'Gate failed: ')).toMatch(
      new RegExp(
        `^Gate failed: agent_b\\.delta\\(mean/reward\\)\\.upper < -0\\.1 holds: delta\\(mean/reward\\) of agent agent_b ${num(deltaB)} \\(exact\\) ` +
          "\\(the run's live estimate at its end, 95% confidence sequence, (\\d+)/\\1 tasks\\)$",
      ),
    );
    expect(gateLine(strictRun, 'Gate passed: ')).toMatch(
      /^Gate passed: agent_a\.delta\(mean\/reward\) < -0\.02 does not hold: .* \+0\.0000 \(exact\)/,
    );
    expect(lines(strictRun).filter((l) => l.startsWith('Gate '))).toHaveLength(2);
  });

  it('run: exits 0 when no rule holds; --json carries the gates in its summary', async () => {
    const r = await runCli(
      [...runArgs({ ...d, output: lenientOut }), '--server', lenient().flag('mcqa_rs'), '--json', '--fail-if', 'all.delta < -0.02'],
      temporal.env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(gateLine(r, 'Gate passed: all.delta(mean/reward) < -0.02 does not hold: ')).toBeDefined();
    const summary = JSON.parse(r.stdout) as { exitStatus: number; gates: Array<Record<string, unknown>> };
    expect(summary.gates).toEqual([
      expect.objectContaining({ rule: 'all.delta(mean/reward) < -0.02', failed: false, compared: 0, value: { estimate: 0, lo: 0, hi: 0 } }),
    ]);
  });

  it('report: exits 5 with the line of each rule that holds (task-clustered interval), 0 when none holds', async () => {
    const failed = await runCli(
      ['report', '-o', d.output, '--fail-if', 'all.delta(mean/reward) < -0.02', '--fail-if', 'agent_b.flips(1->0) > 0.1'],
      temporal.env,
    );
    expect(failed.code, failed.stderr).toBe(5);
    const all = gateLine(failed, 'Gate failed: all.delta(mean/reward) < -0.02 holds: ');
    const m = /of all agents (\S+) \[(\S+), (\S+)\] \(95% task-clustered interval, (\d+) paired rows in (\d+) tasks\)$/.exec(all ?? '');
    expect(m, all).not.toBeNull();
    expect(m![1]).toBe(num(deltaAll));
    expect(Number(m![2].replace('−', '-'))).toBeLessThan(deltaAll);
    expect(Number(m![3].replace('−', '-'))).toBeGreaterThan(deltaAll);
    expect(Number(m![4])).toBe(readRows(d.rolloutsPath).length);
    expect(Number(m![5])).toBe(16);
    expect(gateLine(failed, 'Gate failed: agent_b.flips(1->0) > 0.1 holds: ')).toContain(`flips(1->0) of agent agent_b ${num(-deltaB)} [`);

    const passed = await runCli(['report', '-o', d.output, '--json', '--fail-if', 'agent_a.delta.lower < -0.02'], temporal.env);
    expect(passed.code, passed.stderr).toBe(0);
    const data = JSON.parse(passed.stdout) as { gates: Array<{ rule: string; failed: boolean; compared: number }> };
    expect(data.gates).toEqual([expect.objectContaining({ rule: 'agent_a.delta(mean/reward).lower < -0.02', failed: false, compared: 0 })]);
  });

  it('a bad rule: one line saying what is wrong with an example, exit 1, nothing run', async () => {
    const r = await runCli(['report', '-o', d.output, '--fail-if', 'all.delta(mean/reward) =< -0.02'], temporal.env);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: --fail-if 'all.delta(mean/reward) =< -0.02': '=' is not a comparison of the gate: use <, <=, > or >=; ` +
        `e.g. --fail-if 'all.delta(mean/reward) < -0.02' (docs/usage.md, "Gates for CI")`,
    );
    const unknown = await runCli(['report', '-o', d.output, '--fail-if', 'agent_c.delta < 0'], temporal.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/the output has no agent 'agent_c' \(its agents: agent_a, agent_b\)/);
  });
});

describe('reverify compare', () => {
  it("gives the planted difference between the two judges' outputs, per agent, with task-clustered intervals", async () => {
    const r = await runCli(['compare', lenientOut, d.output, '--json'], {});
    expect(r.code, r.stderr).toBe(0);
    const c = JSON.parse(r.stdout) as OutputComparison;
    expect(c.pairs).toHaveLength(1);
    const [p] = c.pairs;
    expect([p.a, p.b, p.onlyA, p.onlyB]).toEqual([lenientOut, d.output, 0, 0]);
    const b = p.agents.find((a) => a.agent === 'agent_b')!;
    expect(b.delta!.mean).toBeCloseTo(deltaB, 12);
    expect(b.delta!.lo).toBeLessThan(deltaB);
    expect(b.delta!.hi).toBeGreaterThan(deltaB);
    expect(b.passTable.pf).toBe(Math.round(-deltaB * b.rows));
    expect(p.agents.find((a) => a.agent === 'agent_a')!.delta!.mean).toBe(0);
    expect(p.all.delta!.mean).toBeCloseTo(deltaAll, 12);
    expect(p.all.delta!.clusters).toBe(16);
    expect(r.stderr).toMatch(/^ {2}agent_b: mean reward 1\.0000 → \S+, delta −\S+ \[/m);
  });

  it('refuses outputs that share no key', async () => {
    const other = join(tempDir(), 'other.jsonl');
    writeFileSync(other, JSON.stringify({ _ng_task_index: 999, _ng_rollout_index: 0, agent_ref: { name: 'agent_a' }, reward: 1 }) + '\n');
    const r = await runCli(['compare', d.output, other], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: '.*out\.jsonl' and '.*other\.jsonl' share no rollout key/);
    expect(readFileSync(d.output, 'utf8')).not.toBe('');
  });
});
