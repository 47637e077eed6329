/**
 * The honest end of a run (issue 10 item 2), through the real `reverify` command on the shared dev
 * server and the real reference resources server: per agent, rollouts planned / scored / missing /
 * not persisted / attempts in the sidecar, checked against the files; exit status 3 when judge
 * failures are left at the attempt cap, 0 when every rollout is scored; `--json` prints only one
 * JSON object on stdout, with the same counts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EndSummary } from '../../src/cli/end-summary.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { AGENTS, keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { byTask, emptyMetrics, judgeFailed, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { sidecarPath as sidecarOf } from '../../src/contract/file-names.js';

const temporal = useSharedTemporal('end-summary');
const reference = closedAfterEach(startReferenceServer);

const agentOf = (row: Record<string, unknown>) => (row.agent_ref as { name: string }).name;

describe('the end of a run', () => {
  it('judge failures left at the attempt cap: per-agent counts match the files, exit 3, --json is the only stdout', async () => {
    const rs = await reference({ judgeFailRate: 0.5, seed: 7 });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 10, repeats: 2 });
    const run = await runCli([...runArgs(d), '--max-attempts', '2', '--rejudge-delay', '0.1', '--json'], temporal.env);
    expect(run.code, run.stderr).toBe(3);
    const lines = run.stdout.split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]) as EndSummary;
    expect(summary.exitStatus).toBe(3);
    expect(summary.outcome).toBe('rollouts-missing');

    const main = readRows(d.output);
    const sidecar = readRows(d.output.replace(/\.jsonl$/, '_failures.jsonl'));
    const scoredKeys = new Set(keysOf(main));
    for (const agent of AGENTS) {
      const a = summary.agents![agent];
      const mainOf = main.filter((r) => agentOf(r) === agent);
      const sidecarOf = sidecar.filter((r) => agentOf(r) === agent);
      const missingKeys = new Set(keysOf(sidecarOf).filter((k) => !scoredKeys.has(k)));
      expect(a.scored).toBe(mainOf.length);
      expect(a.sidecar).toBe(sidecarOf.length);
      expect(a.missing).toBe(missingKeys.size);
      expect(a.planned).toBe(a.scored + a.missing + a.notPersisted);
      // The line for people, on stderr.
      expect(run.stderr).toContain(
        `  ${agent}: ${a.planned} planned: ${a.scored} scored, ${a.missing} still missing from the score, ` +
          `${a.notPersisted} not persisted (${a.sidecar} attempt(s) in the failures sidecar)`,
      );
    }
    const missing = AGENTS.reduce((n, agent) => n + summary.agents![agent].missing, 0);
    expect(missing).toBeGreaterThan(0);
    expect(summary.rollouts.missing).toBe(missing);
    expect(summary.rollouts.missingAfterCap).toBe(missing);
    expect(summary.rollouts.scored).toBe(main.length);
    expect(summary.attempts.rounds).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`Incomplete: ${missing} rollout\\(s\\) still failed after 2 attempt\\(s\\), the attempt cap`));
    expect(summary.missingFromScore).toEqual({ resumable: 0, atCap: missing });
  });

  it('every rollout scored: exit 0, per-agent lines, no Incomplete line', async () => {
    const rs = await reference({});
    const d = await sampleRun(tempDir(), rs.port, { tasks: 5, repeats: 2 });
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code, run.stderr).toBe(0);
    for (const agent of AGENTS)
      expect(run.stdout).toMatch(new RegExp(`  ${agent}: (\\d+) planned: \\1 scored, 0 still missing from the score, 0 not persisted`));
    expect(run.stdout).not.toMatch(/Incomplete:/);
  });
});

describe('the exit status follows the coverage of the files, whatever path led there', () => {
  const scripted = closedAfterEach(startScriptedServer);
  const transient = reward(0.0, { _ng_failure_class: 'transient' });
  const summaryOf = (stdout: string) => JSON.parse(stdout.trim()) as EndSummary;

  it('failures at the attempt cap under --no-rejudge: a fresh run and a --resume over the same files give exit 3 and the same --json outcome', async () => {
    const s = await scripted({ verify: byTask({ 3: judgeFailed(), 4: transient }, reward(1.0)), aggregate: emptyMetrics });
    const d = await sampleRun(tempDir(), s.port, { tasks: 6, repeats: 2 });
    const args = [...runArgs(d), '--no-rejudge', '--max-attempts', '1', '--json'];
    const fresh = await runCli(args, temporal.env);
    const files = [readFileSync(d.output), readFileSync(sidecarOf(d.output))];
    const again = await runCli([...args, '--resume'], temporal.env);
    // The resume had nothing to run: the files are the same.
    expect([readFileSync(d.output), readFileSync(sidecarOf(d.output))]).toEqual(files);
    for (const r of [fresh, again]) {
      expect(r.code, r.stderr).toBe(3);
      const summary = summaryOf(r.stdout);
      expect([summary.exitStatus, summary.outcome]).toEqual([3, 'rollouts-missing']);
      expect(summary.missingFromScore).toEqual({ resumable: 0, atCap: 4 });
      expect(r.stderr).toContain('Incomplete: 4 rollout(s) still failed after 1 attempt(s), the attempt cap');
      expect(r.stderr).toContain('--resume --extend-attempts N');
    }
  });

  it('a transient failure below the cap under --no-rejudge: exit 3 and --resume (not --extend-attempts); the resume that scores it exits 0', async () => {
    let healed = false;
    const s = await scripted({ verify: byTask({ 4: () => (healed ? reward(1.0) : transient) }, reward(1.0)), aggregate: emptyMetrics });
    const d = await sampleRun(tempDir(), s.port, { tasks: 6, repeats: 2 });
    const args = [...runArgs(d), '--no-rejudge', '--json'];
    const fresh = await runCli(args, temporal.env);
    expect(fresh.code, fresh.stderr).toBe(3);
    const summary = summaryOf(fresh.stdout);
    expect([summary.exitStatus, summary.outcome, summary.missingFromScore]).toEqual([3, 'rollouts-missing', { resumable: 2, atCap: 0 }]);
    expect(fresh.stderr).toMatch(
      /Incomplete: 2 rollout\(s\) still missing from the score, below the attempt cap .*run the same command with --resume$/m,
    );
    expect(fresh.stderr).not.toContain('--extend-attempts');
    healed = true;
    const again = await runCli([...args, '--resume'], temporal.env);
    expect(again.code, again.stderr).toBe(0);
    expect([summaryOf(again.stdout).outcome, summaryOf(again.stdout).missingFromScore]).toEqual(['complete', { resumable: 0, atCap: 0 }]);
    expect(again.stderr).not.toContain('Incomplete:');
  });
});
