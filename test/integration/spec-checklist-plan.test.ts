/**
 * Spec §6 (nemo-gym-contract.md) checks of join, limit, recovery predicate, seeding, resume cache
 * and payload preparation (29–71) that have no pure function to unit-test here: in reverify they
 * live in the plan and seed activities (activities/plan-run.ts, seed-successes.ts,
 * src/io/output-cache.ts), so they are checked by whole runs, observing what a scripted resources
 * server receives on /verify. (The pure parts — 27–28, 32, 35–42, 51–53, 62–63 — are unit-tested.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { resumeSummary, seededLine } from '../helpers/expected-lines.js';
import { closedAfterEach } from '../helpers/hooks.js';
import type { RunOutcome } from '../helpers/run-fixtures.js';
import { keyText, reward, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import {
  failureLine,
  inputLine,
  keys,
  lines,
  responseText,
  rows,
  successLine,
  tasks,
  timeoutLine,
  withResponseId,
  writeFixture,
  writeLines,
} from '../helpers/spec-fixtures.js';
import { plain, recover, sentKeys } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('spec-checklist-plan');

const server = closedAfterEach(startScriptedServer);

describe('§6 join / pairing and limit (29, 31, 33–34, 65)', () => {
  it('§6.29 given 5 rows and limit 3, the first 3 rollouts (of the rollouts file) are paired', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4]), successes: [4, 2, 0, 1, 3].map((t) => successLine({ t })) });
    const { result, error } = await plain(f, rs, { limit: 3 });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '2:0', '4:0']);
    expect(result!.planned).toBe(3);
  });

  it('§6.65 limit is forwarded to pairing, so it counts rows before the resume filter (§4.7.4): limit 3 with the first row already done verifies only 2', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4]), successes: [4, 2, 0, 1, 3].map((t) => successLine({ t })) });
    writeLines(f.output, [successLine({ t: 4 })]);
    const { lines: printed, error } = await plain(f, rs, { limit: 3, resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '2:0']);
    expect(printed).toContain(resumeSummary(3, 1, 0, 0, 2));
  });

  it('§6.31 a rollout key absent from the inputs: ConfigError "No matching materialized input row" (ours: with file:line and the key), before any request', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]), successes: [successLine({ t: 0 }), successLine({ t: 9 })] });
    const { error } = await plain(f, rs);
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`${f.rollouts}:2: No matching materialized input row found for rollout row (9, 0)`);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(lines(f.output)).toEqual([]);
  });

  it("§6.33/§6.70 (ours: the only predicate is recovery's, judge failures only) a predicate keeping T=0,2 of T=0..3: only T=0,2 are paired", async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2, 3]),
      successes: [],
      failures: [failureLine({ t: 0 }), timeoutLine({ t: 1 }), failureLine({ t: 2 }), failureLine({ t: 3 }, 'legitimate')],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '2:0']);
  });

  it('§6.34 a predicate (judge failures at even T) and limit 2 over 6 rows: T=0,2 (the limit counts rows after the predicate)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2, 3, 4, 5]),
      successes: [],
      failures: [0, 1, 2, 3, 4, 5].map((t) => (t % 2 === 0 ? failureLine({ t }) : timeoutLine({ t }))),
    });
    const { error } = await recover(f, rs, { limit: 2 });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '2:0']);
  });
});

describe('§6 recovery predicate (43–46)', () => {
  it('§6.43 the same judge-failed key twice: the first row is kept (its response is sent) and the second dropped', async () => {
    const rs = await server();
    const first = withResponseId(failureLine({ t: 1 }), 'resp_first');
    const second = withResponseId(failureLine({ t: 1 }), 'resp_second');
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]), successes: [successLine({ t: 0 })], failures: [first, second] });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect((rs.verifyBodies[0].response as { id: string }).id).toBe('resp_first');
  });

  it('§6.44 a non-judge row is dropped; a judge row for another key is kept', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 })],
      failures: [timeoutLine({ t: 1 }), failureLine({ t: 2 })],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0']);
  });

  it('§6.45 a non-judge row for key K followed by a judge row for K: the judge row is kept (rejections do not consume the key)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1]),
      successes: [successLine({ t: 0 })],
      failures: [withResponseId(timeoutLine({ t: 1 }), 'resp_timeout'), withResponseId(failureLine({ t: 1 }), 'resp_judge')],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect((rs.verifyBodies[0].response as { id: string }).id).toBe('resp_judge');
  });

  it('§6.46 skip keys {(0,0),(2,0)} (present as successes): judge rows for T=0 and T=2 are dropped and T=1 kept', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 }), successLine({ t: 2 })],
      failures: [failureLine({ t: 0 }), failureLine({ t: 1 }), failureLine({ t: 2 })],
    });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
  });
});

describe('§6 seeding successes (47–50)', () => {
  it('§6.47 3 success rows: the output contains exactly those rows, and their keys are not re-verified', async () => {
    const rs = await server();
    const successes = [successLine({ t: 2 }), successLine({ t: 0 }), successLine({ t: 1 })];
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]), successes, failures: [failureLine({ t: 1 })] });
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(readFileSync(f.output, 'utf8')).toBe(successes.map((l) => l + '\n').join(''));
    expect(rs.verifyBodies).toHaveLength(0);
    expect(printed).toContain(seededLine(3, f));
  });

  it('§6.48 an empty successes file: an empty output file is created and no keys are returned', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), { inputs: tasks([0]), successes: [], failures: [timeoutLine({ t: 0 })] });
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(readFileSync(f.output, 'utf8')).toBe('');
    expect(printed).toContain(seededLine(0, f));
  });

  it('§6.49 two keyless rows (the second without a trailing newline) and a blank line: the blank is skipped, both rows are written newline-terminated, no keys are returned', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const keyless1 = '{"reward":1.0,"note":"first keyless"}';
    const keyless2 = '{"reward":0.0,"note":"second keyless"}';
    const f = writeFixture(tempDir(), { inputs: tasks([0]), failures: [failureLine({ t: 0 })] });
    writeFileSync(f.rollouts, `${keyless1}\n\n${keyless2}`);
    const { lines: printed, error } = await recover(f, rs, { disableAggregation: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0']); // keyless rows do not make (0, 0) present
    expect(readFileSync(f.output, 'utf8').startsWith(`${keyless1}\n${keyless2}\n`)).toBe(true);
    expect(lines(f.output)).toHaveLength(3);
    expect(printed).toContain(seededLine(2, f));
  });

  it('§6.50 an output already holding T=0 and successes T=1,2: keys {0,1,2}, each once in the output (and a judge failure of T=1 is not re-verified)', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2, 3]),
      successes: [successLine({ t: 0 }), successLine({ t: 1 }), successLine({ t: 2 })],
      failures: [failureLine({ t: 1 }), failureLine({ t: 3 })],
    });
    writeLines(f.output, [successLine({ t: 0 })]);
    const { lines: printed, error } = await recover(f, rs, { append: true });
    expect(error).toBeNull();
    expect(printed).toContain(seededLine(2, f));
    expect(sentKeys(rs)).toEqual(['3:0']);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0', '2:0', '3:0']);
  });
});

describe('§6 resume cache (54–61, 68–69)', () => {
  describe('resume with neither output nor sidecar', () => {
    let rs: ScriptedServer;
    let outcome: RunOutcome;
    beforeAll(async () => {
      rs = await startScriptedServer();
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
      outcome = await plain(f, rs, { resume: true });
      await rs.close();
    });
    it('§6.54 the cache is empty and "Skipping resume_from_cache" is printed', () => {
      expect(outcome.error).toBeNull();
      expect(outcome.lines).toContain("Skipping resume_from_cache because cache paths don't exist!");
    });
    it('§6.61/§6.69 an empty cache (no cache files): all payloads remain', () => {
      expect(sentKeys(rs)).toEqual(['0:0', '1:0', '2:0']);
    });
  });

  it('§6.55 main output rows (0,0),(1,2): those keys are done; (1,0) and (0,2) still run', async () => {
    const rs = await server();
    const specs = [
      { t: 0, r: 0 },
      { t: 1, r: 2 },
      { t: 1, r: 0 },
      { t: 0, r: 2 },
    ];
    const f = writeFixture(tempDir(), { inputs: specs });
    writeLines(f.output, [successLine({ t: 0, r: 0 }), successLine({ t: 1, r: 2 })]);
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:2', '1:0']);
    expect(printed).toContain(resumeSummary(4, 2, 0, 0, 2));
  });

  it('§6.56 sidecar rows (5,0) terminal and (6,0) non-terminal: only (5,0) is terminal, (6,0) runs again', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([5, 6]) });
    writeLines(f.outputSidecar, [timeoutLine({ t: 5 }), failureLine({ t: 6 })]);
    const { lines: printed, error } = await plain(f, rs, { resume: true, maxAttempts: 3, rejudgeDelayMs: 0 });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['6:0']);
    expect(printed).toContain(resumeSummary(2, 0, 1, 0, 1));
  });

  it('§6.57 NEMO_GYM_MAX_ROLLOUT_ATTEMPTS=2 and sidecar rows (7,0)×2, (8,0)×1: only (7,0) is maxed out', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([7, 8]) });
    writeLines(f.outputSidecar, [failureLine({ t: 7 }), failureLine({ t: 8 }), failureLine({ t: 7 })]);
    const saved = process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS;
    process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS = '2';
    try {
      const { lines: printed, error } = await plain(f, rs, { resume: true, maxAttempts: undefined, rejudgeDelayMs: 0 });
      expect(error).toBeNull();
      expect(sentKeys(rs)).toEqual(['8:0']);
      expect(printed).toContain(resumeSummary(2, 0, 0, 1, 1));
    } finally {
      if (saved === undefined) delete process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS;
      else process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS = saved;
    }
  });

  it('§6.58 sidecar rows without indices and blank lines are ignored', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeFileSync(
      f.outputSidecar,
      '{"reward":0.0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}\n\n   \n{"_ng_failure_class":"judge_failed","_ng_task_index":0}\n',
    );
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect(printed).toContain(resumeSummary(2, 0, 0, 0, 2));
  });

  it('§6.59 only a sidecar (no output): no successes, and its terminal keys are still loaded', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.outputSidecar, [timeoutLine({ t: 0 })]);
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect(printed).toContain(resumeSummary(2, 0, 1, 0, 1));
    expect(printed).not.toContain("Skipping resume_from_cache because cache paths don't exist!");
  });

  it('§6.60 cache {success (0,0), terminal (1,0), maxed (2,0)} and payloads T=0..4: T=3,4 remain, in order', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    writeLines(f.outputSidecar, [timeoutLine({ t: 1 }), failureLine({ t: 2 }), failureLine({ t: 2 })]);
    const { lines: printed, error } = await plain(f, rs, { resume: true, maxAttempts: 2, rejudgeDelayMs: 0, concurrency: 1 });
    expect(error).toBeNull();
    expect(rs.verifyBodies.map(keyText)).toEqual(['3:0', '4:0']);
    expect(printed).toContain(resumeSummary(5, 1, 1, 1, 2));
  });

  it('§6.68 resume with the output holding (0,0) and pairs T=0,1: only T=1 remains', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    const { error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
  });
});

describe('§6 payload preparation (64–67, 71)', () => {
  let rs: ScriptedServer;
  let outcome: RunOutcome;
  const rolloutRow = (t: number) =>
    `{"responses_create_params":{"input":"from the rollouts file"},"response":${responseText(t)},"reward":0.0,` +
    `"expected_answer":"B","rollout_only":true,"_ng_task_index":${t},"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}`;
  beforeAll(async () => {
    rs = await startScriptedServer();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]), successes: [rolloutRow(2), rolloutRow(0), rolloutRow(1)] });
    outcome = await plain(f, rs);
    await rs.close();
  });

  it("§6.64 3 pairs and no resume: 3 payloads, each carrying its rollout's response", () => {
    expect(outcome.error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(3);
    for (const b of rs.verifyBodies) expect(b.response).toEqual(JSON.parse(responseText(b._ng_task_index as number)));
  });

  it('§6.66 the inputs and rollouts paths are not swapped: the payload is the materialized input row (its params, its expected_answer), with only the response from the rollout', () => {
    for (const b of rs.verifyBodies) {
      const t = b._ng_task_index as number;
      expect(b).toEqual({ ...JSON.parse(inputLine({ t })), response: JSON.parse(responseText(t)) });
      expect(b.expected_answer).toBe('A');
      expect('rollout_only' in b).toBe(false);
    }
  });

  it('§6.67 each pair is turned into a payload (and sent) exactly once', () => {
    expect(rs.verifyBodies.map(keyText).sort()).toEqual(['0:0', '1:0', '2:0']);
  });

  it('§6.71 no predicate outside recovery: a rollouts row that carries a failure class is verified like any other', async () => {
    const s = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]), successes: [successLine({ t: 0 }), failureLine({ t: 1 })] });
    const { error } = await plain(f, s);
    expect(error).toBeNull();
    expect(sentKeys(s)).toEqual(['0:0', '1:0']);
  });
});
