/**
 * Re-judgments settled as operations (issue 9 item 3, newer NeMo Gym's admit / record / withdraw /
 * unresolved_rejudgments), on the shared dev server with a scripted judge: a worker SIGKILLed
 * between the judge's answers and their commit leaves the re-judgments admitted and unsettled
 * (`reverify status` lists them), then exactly one settled row each; settling again writes
 * nothing; an answer without a grade is withdrawn and the failure stays selected.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readCommand } from '../../src/cli/read-command.js';
import { runCommand } from '../../src/cli/run-command.js';
import { statusCommand } from '../../src/cli/status-command.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { operationIdOf } from '../helpers/operation-ids.js';
import { captureIo } from '../helpers/run-fixtures.js';
import { byTask, reward, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { recover, sentKeys } from '../helpers/spec-run.js';
import { failureLine, keys, lines, rows, successLine, tasks, writeFixture, responseText } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('rejudge-settlement');
const server = closedAfterEach(startScriptedServer);

/** Successes T=0,1 in --rollouts, judge failures T=2,3 in its sidecar. */
function fixture() {
  return writeFixture(tempDir(), {
    inputs: tasks([0, 1, 2, 3]),
    successes: [successLine({ t: 0 }), successLine({ t: 1 })],
    failures: [failureLine({ t: 2 }), failureLine({ t: 3 })],
  });
}

async function statusLines(output: string): Promise<string[]> {
  const out: string[] = [];
  await statusCommand(output, (l) => out.push(l));
  return out;
}

describe('re-judgments as operations', () => {
  it(
    'a worker killed between the judge answers and the commit: listed as unsettled, then exactly one settled row each, no second judge call',
    { timeout: 180_000 },
    async () => {
      const rs = await server({ verify: () => reward(0.9) });
      const f = fixture();
      const opts = { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')], judgeFailedOnly: true };
      const doomed = await startWorkerProcess({ ...temporal.env, REVERIFY_TEST_KILL_BATCH_AT: 'published' });
      const running = runCommand(opts, { worker: false, heartbeatTimeoutMs: 3000 }, captureIo());
      const died = await new Promise<string | null>((resolve) => doomed.once('exit', (_code, signal) => resolve(signal)));
      expect(died).toBe('SIGKILL');
      // The judge answered both; nothing is settled yet: the output holds the seeded successes only.
      expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
      expect(keys(rows(f.output))).toEqual(['0:0', '1:0']);
      const unsettled = await statusLines(f.output);
      expect(unsettled).toContainEqual(expect.stringMatching(/^Re-judgments admitted, not settled \(outcome unknown\): 2: /));
      expect(unsettled).toContainEqual(expect.stringMatching(/^ {2}[0-9a-f-]+\/r1\/2\.0 \(key 2:0\), round 1, batch 1$/));
      expect(unsettled).toContainEqual(expect.stringMatching(/^ {2}[0-9a-f-]+\/r1\/3\.0 \(key 3:0\), round 1, batch 1$/));

      const worker = await startWorkerProcess(temporal.env);
      try {
        expect(await running).toMatchObject({ done: 2, failed: 0 });
      } finally {
        await sigkill(worker);
      }
      // The next worker took the published verdicts: the judge was not called again.
      expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
      const out = lines(f.output);
      expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
      const settled = out.filter((l) => operationIdOf(l) !== undefined);
      expect(settled).toHaveLength(2);
      for (const line of settled) {
        const row = JSON.parse(line) as Record<string, unknown>;
        expect(row).toMatchObject({ reward: 0.9, response: JSON.parse(responseText(row._ng_task_index as number)) });
        expect(Object.keys(row).filter((k) => k.startsWith('_ng_failure') || k.startsWith('_ng_rejudge'))).toEqual([]);
      }
      // The failures stay in the recovery source with their debit.
      expect(keys(rows(f.rolloutsSidecar))).toEqual(['2:0', '3:0']);
      const unresolvedAfter = await statusLines(f.output);
      expect(unresolvedAfter.some((l) => l.startsWith('Re-judgments admitted'))).toBe(false);

      // Settling again writes nothing: a second pass sends nothing and leaves the files as they are.
      const before = { out: readFileSync(f.output, 'utf8'), side: readFileSync(f.outputSidecar, 'utf8') };
      const again = await recover(f, rs, { resume: true });
      expect(again.error).toBeNull();
      expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
      expect({ out: readFileSync(f.output, 'utf8'), side: readFileSync(f.outputSidecar, 'utf8') }).toEqual(before);
    },
  );

  it('a settled judge failure is its failure row regraded: a field the verifier does not echo is kept', { timeout: 120_000 }, async () => {
    const rs = await server({ verify: () => reward(0.9, { extracted_answer: 'A' }) });
    const captured = failureLine({ t: 3 }).replace('"reward":0.0,', '"reward":0.0,"ng_model_call_capture":{"calls":[1,2]},');
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2, 3]),
      successes: [successLine({ t: 0 }), successLine({ t: 1 })],
      failures: [failureLine({ t: 2 }), captured],
    });
    const run = await recover(f, rs);
    expect(run.error).toBeNull();
    const t3 = rows(f.output).filter((r) => r._ng_task_index === 3);
    expect(t3).toHaveLength(1);
    expect(t3[0]).toMatchObject({
      reward: 0.9,
      extracted_answer: 'A',
      ng_model_call_capture: { calls: [1, 2] },
      responses_create_params: JSON.parse(captured).responses_create_params,
      _ng_operation_id: expect.stringMatching(/\/r1\/3\.0$/),
    });
    expect(Object.keys(t3[0]).filter((k) => k.startsWith('_ng_failure'))).toEqual([]);
  });

  it('an answer without a grade is withdrawn: nothing written, the failure stays selected, a later pass settles it once', async () => {
    const ungraded: Reply = { status: 200, body: { reward: null, verdict: 'unparsable' } };
    const rs = await server({ verify: byTask({ 3: ungraded }, reward(0.9)) });
    const f = fixture();
    // Recovery into the run's own files (--append): one run whose selected outcomes a reader sees.
    const own = { output: f.rollouts, append: true };
    const sidecarBefore = readFileSync(f.rolloutsSidecar, 'utf8');
    const first = await recover(f, rs, { ...own, maxAttempts: 1 });
    expect(first.error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
    expect(keys(rows(f.rollouts)).sort()).toEqual(['0:0', '1:0', '2:0']);
    expect(readFileSync(f.rolloutsSidecar, 'utf8')).toBe(sidecarBefore);
    expect(first.lines).toContainEqual(
      expect.stringMatching(/^Re-judgment withdrawn for 1 row\(s\): the verifier answered without a grade/),
    );
    const selected: string[] = [];
    await readCommand({ output: f.rollouts, disposition: 'failure' }, { row: (l) => void selected.push(l), err: () => undefined });
    expect(keys(selected.map((l) => JSON.parse(l) as Record<string, unknown>))).toEqual(['3:0']);

    const graded = await server({ verify: () => reward(0.7) });
    const second = await recover(f, graded, own);
    expect(second.error).toBeNull();
    expect(sentKeys(graded)).toEqual(['3:0']);
    const t3 = lines(f.rollouts).filter((l) => (JSON.parse(l) as { _ng_task_index: number })._ng_task_index === 3);
    expect(t3).toHaveLength(1);
    expect(JSON.parse(t3[0])).toMatchObject({ reward: 0.7, _ng_operation_id: expect.stringMatching(/\/r1\/3\.0$/) });
  });
});
