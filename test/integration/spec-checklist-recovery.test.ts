/**
 * Spec §6 (nemo-gym-contract.md), `--judge-failed-only` recovery end to end (119–131), the guard
 * skip (100) and the append rule of output path preparation (89), as whole runs against the shared
 * real Temporal dev server and a scripted resources server that records what it receives.
 *
 * Fixture shape of §6.119: `inputs.jsonl`, `rollouts.jsonl` = successes, `rollouts_failures.jsonl`
 * = sidecar. NeMo Gym "returns" the sorted rows; we return counts, so "return sorted" is checked on
 * what the resources server receives on /aggregate_metrics (the same sorted reload, §4.11).
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recoveryWarning } from '../../src/contract/messages.js';
import { seededLine } from '../helpers/expected-lines.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify, type RunOutcome } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, reward, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import {
  agentRef,
  failureLine,
  inputLine,
  keys,
  lines,
  responseText,
  rows,
  successLine,
  tasks,
  timeoutLine,
  writeFixture,
  writeLines,
  type Fixture,
} from '../helpers/spec-fixtures.js';
import { aggregatedKeys, recover, sentKeys } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('spec-checklist-recovery');

const server = closedAfterEach(startScriptedServer);

describe('§6 guard and output preparation in recovery mode (89, 100)', () => {
  it('§6.100 judge_failed_only: the guard passes without contacting any server (an unsupported RS is not asked, nothing is prefixed)', async () => {
    const rs = await server({ mode: 'unsupported', verify: () => reward(0.9) });
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0, 1]), successes: [successLine({ t: 0 })], failures: [failureLine({ t: 1 })] });
    const { result, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(rs.modeRequests).toBe(0);
    expect(rs.requests.map((r) => `${r.method} ${r.url}`).filter((r) => r !== 'POST /verify' && r !== 'POST /aggregate_metrics')).toEqual(
      [],
    );
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect(result!.forceWarning).toBeNull();
    expect(readdirSync(dir).filter((n) => n.startsWith('unsafe_'))).toEqual([]);
  });

  it('§6.89 given an existing output and sidecar with append, nothing is deleted or raised: both keep their bytes', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]), successes: [successLine({ t: 0 })], failures: [failureLine({ t: 1 })] });
    const oldMain = successLine({ t: 0 }) + '\n';
    const oldSide = timeoutLine({ t: 2 }) + '\n';
    writeFileSync(f.output, oldMain);
    writeFileSync(f.outputSidecar, oldSide);
    const { lines: printed, error } = await recover(f, rs, { append: true });
    expect(error).toBeNull();
    expect(printed.filter((l) => l.startsWith('Deleted existing output file'))).toEqual([]);
    expect(readFileSync(f.output, 'utf8').startsWith(oldMain)).toBe(true);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0']);
    expect(readFileSync(f.outputSidecar, 'utf8')).toBe(oldSide);
  });
});

describe('§6 judge-failed-only end to end (119–131)', () => {
  describe('successes T=0,1 and judge failures T=2,3', () => {
    let rs: ScriptedServer;
    let f: Fixture;
    let dir: string;
    let outcome: RunOutcome;
    beforeAll(async () => {
      rs = await startScriptedServer({ verify: () => reward(0.9) });
      dir = tempDir();
      f = writeFixture(dir, {
        inputs: tasks([0, 1, 2, 3]),
        successes: [successLine({ t: 0 }), successLine({ t: 1 })],
        failures: [failureLine({ t: 2 }), failureLine({ t: 3 })],
      });
      outcome = await recover(f, rs);
      await rs.close();
    });

    it("§6.119 only T=2,3 are sent (input row + the sidecar row's response); the output holds T=0..3; seeded rows keep reward 1.0 byte for byte; recovered rows carry 0.9 and no failure class; the reload is sorted; no unsafe_ file", () => {
      expect(outcome.error).toBeNull();
      expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
      for (const body of rs.verifyBodies) {
        const t = body._ng_task_index as number;
        expect(body).toEqual({ ...JSON.parse(inputLine({ t })), response: JSON.parse(responseText(t)) });
      }
      const out = lines(f.output);
      expect(out.slice(0, 2)).toEqual([successLine({ t: 0 }), successLine({ t: 1 })]);
      expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
      // Settled re-judgments (the run store's record_rejudgment and _REJUDGE_GRADING_KEYS): the failure
      // row regraded (its fields the verifier does not echo kept, its failure markers dropped), with the
      // operation id. NeMo Gym 0.7.0 writes the verifier's reply alone (docs/compatibility.md).
      for (const r of rows(f.output).filter((r) => (r._ng_task_index as number) >= 2)) {
        const t = r._ng_task_index as number;
        expect(r).toEqual({
          reward: 0.9,
          _ng_task_index: t,
          _ng_rollout_index: 0,
          agent_ref: agentRef(),
          response: JSON.parse(responseText(t)),
          responses_create_params: JSON.parse(failureLine({ t })).responses_create_params,
          _ng_operation_id: expect.stringMatching(new RegExp(`^[0-9a-f-]+/r1/${t}\\.0$`)),
        });
      }
      expect(rows(f.outputSidecar)).toEqual([]);
      expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0', '3:0']]);
      expect(rs.aggregateBodies[0].verify_responses.map((r) => r.reward)).toEqual([1, 1, 0.9, 0.9]);
      expect(readdirSync(dir).filter((n) => n.startsWith('unsafe_'))).toEqual([]);
      expect(outcome.lines).toContain(seededLine(2, f));
      expect(outcome.result).toMatchObject({ seeded: 2, done: 2, failed: 0 });
    });

    it('§6.120 the two-sources warning is printed', () => {
      expect(outcome.lines).toContain(recoveryWarning());
      expect(recoveryWarning().startsWith('WARNING: judge-failed-only recovery merges rewards from TWO sources')).toBe(true);
    });
  });

  it('§6.121 failures T=1 (judge) and T=2 (timeout_exceeded): only T=1 is sent; the output holds T=0,1', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 })],
      failures: [failureLine({ t: 1 }), timeoutLine({ t: 2 })],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0']);
  });

  it('§6.122 success T=0 and judge failures T=1,2 with aggregation on: aggregation covers T=0,1,2 (the seeded row stripped of responses_create_params, response = {usage}, collector fields such as ng_trajectory kept)', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const seeded = successLine({ t: 0 }).replace(/}$/, ',"ng_trajectory":{"steps":[{"n":1}]},"ng_model_call_capture":{"calls":[]}}');
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [seeded],
      failures: [failureLine({ t: 2 }), failureLine({ t: 1 })],
    });
    const { result, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0']]);
    const { responses_create_params: _rcp, response, ...rest } = JSON.parse(seeded) as Record<string, unknown>;
    expect(rs.aggregateBodies[0].verify_responses[0]).toEqual({ ...rest, response: { usage: (response as { usage: unknown }).usage } });
    expect(rs.aggregateBodies[0].verify_responses[0].ng_trajectory).toEqual({ steps: [{ n: 1 }] });
    expect(result!.metricsPath).toBe(f.metrics);
    expect(existsSync(f.metrics)).toBe(true);
  });

  it('§6.123 no successes and judge failures T=0..2: all are recovered', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [],
      failures: [failureLine({ t: 0 }), failureLine({ t: 1 }), failureLine({ t: 2 })],
    });
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0', '2:0']);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0']);
    expect(printed).toContain(seededLine(0, f));
  });

  it('§6.124 key T=0 in both successes and failures: it is not sent and appears once, with its original reward', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1]),
      successes: [successLine({ t: 0 })],
      failures: [failureLine({ t: 0 }), failureLine({ t: 1 })],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    const out = rows(f.output);
    expect(keys(out).filter((k) => k === '0:0')).toHaveLength(1);
    expect(lines(f.output)[0]).toBe(successLine({ t: 0 }));
  });

  it('§6.125 a prior recovery output (T=0 seeded, T=1 recovered) and resume: only T=2 is sent and T=0 is not re-seeded', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 })],
      failures: [failureLine({ t: 1 }), failureLine({ t: 2 })],
    });
    const prior = [
      successLine({ t: 0 }),
      '{"reward":0.9,"_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":{"type":"responses_api_agents","name":"agent_a"}}',
    ];
    writeLines(f.output, prior);
    const { lines: printed, error } = await recover(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0']);
    expect(lines(f.output).slice(0, 2)).toEqual(prior);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0', '2:0']);
    expect(printed).toContain(seededLine(0, f));
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0']]);
  });

  describe('resume on the first recovery invocation (no output yet)', () => {
    let rs: ScriptedServer;
    let f: Fixture;
    let outcome: RunOutcome;
    beforeAll(async () => {
      rs = await startScriptedServer({ verify: () => reward(0.9) });
      f = writeFixture(tempDir(), {
        inputs: tasks([0, 1, 2]),
        successes: [successLine({ t: 0 }), successLine({ t: 1 })],
        failures: [failureLine({ t: 2 })],
      });
      outcome = await recover(f, rs, { resume: true });
      await rs.close();
    });

    it('§6.126 the successes are still seeded and aggregation covers all', () => {
      expect(outcome.error).toBeNull();
      expect(sentKeys(rs)).toEqual(['2:0']);
      expect(outcome.lines).toContain(seededLine(2, f));
      expect(keys(rows(f.output))).toEqual(['0:0', '1:0', '2:0']);
      expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0']]);
    });

    it('§6.126 (§4.6.3 before §4.8) the resume cache is read after seeding created the output: the "Resumed from cache" summary is printed, not "Skipping resume_from_cache because cache paths don\'t exist!"', () => {
      expect(outcome.error).toBeNull();
      const seeded = outcome.lines.indexOf(seededLine(2, f));
      expect(seeded).toBeGreaterThanOrEqual(0);
      expect(outcome.lines).not.toContain("Skipping resume_from_cache because cache paths don't exist!");
      const summary = outcome.lines.findIndex((l) => l.startsWith('Resumed from cache. Found:'));
      expect(summary).toBeGreaterThan(seeded);
    });
  });

  it('§6.127 a sidecar with only non-judge failures: nothing is sent, "Nothing to be re-verified" is printed, the seeded success is present', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 })],
      failures: [timeoutLine({ t: 1 }), failureLine({ t: 2 }, 'legitimate')],
    });
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(0);
    expect(printed).toContain('WARNING: Nothing to be re-verified.');
    expect(lines(f.output)).toEqual([successLine({ t: 0 })]);
  });

  it('§6.128 --append onto an existing output holding the successes: only the judge failure is sent and appended; no duplicates', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 }), successLine({ t: 1 })],
      failures: [failureLine({ t: 2 })],
      outputName: 'recovered',
    });
    writeFileSync(f.output, readFileSync(f.rollouts));
    const { lines: printed, error } = await recover(f, rs, { append: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0']);
    expect(printed).toContain(seededLine(0, f));
    expect(readFileSync(f.output, 'utf8').startsWith(readFileSync(f.rollouts, 'utf8'))).toBe(true);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0', '2:0']);
  });

  it("§6.128 --append with --output = the run's own rollouts.jsonl: only the judge failure is sent and appended to it; no duplicates", async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 }), successLine({ t: 1 })],
      failures: [failureLine({ t: 2 })],
    });
    const sidecarBefore = readFileSync(f.rolloutsSidecar, 'utf8');
    const { error } = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.rollouts,
      servers: [rs.flag('rs')],
      judgeFailedOnly: true,
      append: true,
    });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0']);
    const appended = lines(f.rollouts);
    expect(appended.slice(0, 2)).toEqual([successLine({ t: 0 }), successLine({ t: 1 })]);
    expect(appended).toHaveLength(3);
    expect(JSON.parse(appended[2])).toEqual({
      ...JSON.parse(failureLine({ t: 2 })),
      ...Object.fromEntries(
        Object.keys(JSON.parse(failureLine({ t: 2 })))
          .filter((k) => k.startsWith('_ng_failure'))
          .map((k) => [k, undefined]),
      ),
      reward: 0.9,
      response: JSON.parse(responseText(2)),
      _ng_operation_id: expect.stringMatching(/^[0-9a-f-]+\/r1\/2\.0$/),
    });
    expect(readFileSync(f.rolloutsSidecar, 'utf8')).toBe(sidecarBefore);
  });

  it('§6.129 the same append run twice: the second sends nothing and nothing is duplicated', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 }), successLine({ t: 1 })],
      failures: [failureLine({ t: 2 })],
      outputName: 'recovered',
    });
    writeFileSync(f.output, readFileSync(f.rollouts));
    const first = await recover(f, rs, { append: true });
    expect(first.error).toBeNull();
    const afterFirst = readFileSync(f.output);
    rs.reset();
    const second = await recover(f, rs, { append: true });
    expect(second.error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(0);
    expect(second.lines).toContain('WARNING: Nothing to be re-verified.');
    expect(readFileSync(f.output).equals(afterFirst)).toBe(true);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0', '2:0']);
  });

  it('§6.130 no rollouts_failures.jsonl: a file-not-found error naming it (ours: the missing sidecar is reported before seeding, nothing written)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const { error } = await recover(f, rs);
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`No such file or directory: '${f.rolloutsSidecar}'`);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(existsSync(f.output)).toBe(false);
    expect(existsSync(f.outputSidecar)).toBe(false);
  });

  it('§6.131 judge failures T=1,2,3 where T=2,3 judge-fail again: pass 1 writes T=0,1 to the output and T=2,3 to recovered_failures.jsonl; pass 2 with resume sends only T=2,3; the final output has T=0..3 with T=0 once', async () => {
    const rs = await server({
      verify: byTask({
        1: reward(0.9),
        2: (_row, attempt) => (attempt === 0 ? judgeFailed() : reward(0.8)),
        3: (_row, attempt) => (attempt === 0 ? judgeFailed() : reward(0.8)),
      }),
    });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2, 3]),
      successes: [successLine({ t: 0 })],
      failures: [failureLine({ t: 1 }), failureLine({ t: 2 }), failureLine({ t: 3 })],
      outputName: 'recovered',
    });
    const pass1 = await recover(f, rs, { maxAttempts: 1 });
    expect(pass1.error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0', '2:0', '3:0']);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0']);
    expect(f.outputSidecar).toBe(join(f.dir, 'recovered_failures.jsonl'));
    const side = rows(f.outputSidecar);
    expect(keys(side).sort()).toEqual(['2:0', '3:0']);
    for (const r of side) expect(r._ng_failure_class).toBe('judge_failed');

    rs.reset();
    // Pass 1 saved its cap (1) with the run: pass 2 raises it to 3 (a resume keeps the saved cap).
    const pass2 = await recover(f, rs, { resume: true, extendAttempts: 2, rejudgeDelayMs: 0 });
    expect(pass2.error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
    expect(pass2.lines).toContain(seededLine(0, f));
    const out = keys(rows(f.output));
    expect(out.sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(lines(f.output)[0]).toBe(successLine({ t: 0 }));
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0', '3:0']]);
  });
});
