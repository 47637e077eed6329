/**
 * Spec §7 (nemo-gym-contract.md), "Edge cases and bad inputs", as whole runs of `reverify run`
 * against the shared real Temporal dev server and real resources servers on node:http that record
 * what they receive (test/helpers/scripted-server.ts). Each test name states the behaviour this
 * project chooses, and says so where it deliberately differs from NeMo Gym.
 *
 * §7 items already checked elsewhere are not repeated here:
 * - malformed JSON in --rollouts (file:line, nothing sent or written): run.test.ts
 * - a cut-off last line of the output on --resume, --repair-truncated: rejudge.test.ts
 * - an agent name the routing table does not know (file:line): run.test.ts
 * - sidecar rows without indices ignored by the resume cache: spec-checklist-plan.test.ts §6.58
 * - keyless lines of --rollouts always copied by seeding: spec-checklist-plan.test.ts §6.49
 * - first judge_failed sidecar row per key in recovery: spec-checklist-plan.test.ts §6.43
 * - `limit` after the recovery predicate / before the resume filter: spec-checklist-plan.test.ts §6.34, §6.65
 * - --judge-failed-only --append into the run's own rollouts file: spec-checklist-recovery.test.ts §6.128
 * - a missing recovery sidecar: spec-checklist-recovery.test.ts §6.130
 * - _ng_no_persist together with a failure class: spec-checklist.test.ts §6.105
 * - integers above 2^53 in an output resumed from NeMo Gym: rejudge.test.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { setFields, topLevelSpans } from '../../src/contract/json-spans.js';
import { resumeSummary, seededLine } from '../helpers/expected-lines.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify, type RunOutcome } from '../helpers/run-fixtures.js';
import { reward, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import {
  agentRef,
  failureLine,
  inputLine,
  keys,
  lines,
  payload,
  responseText,
  rows,
  successLine,
  tasks,
  withResponseId,
  writeFixture,
  writeLines,
  type Fixture,
} from '../helpers/spec-fixtures.js';
import { aggregatedKeys, plain, recover, sentKeys } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('spec-edge-cases');

const server = closedAfterEach(startScriptedServer);

/** The run stopped with exit 1 and `Error: <where>: <what>` before any /verify request and before any output file exists. */
function expectStoppedBeforeWork(outcome: RunOutcome, rs: ScriptedServer, f: Fixture, where: string, what: string | RegExp): void {
  expect(outcome.error?.code).toBe(1);
  expect(outcome.error?.line.startsWith(`Error: ${where}: `)).toBe(true);
  if (typeof what === 'string') expect(outcome.error?.line).toContain(what);
  else expect(outcome.error?.line).toMatch(what);
  expect(outcome.error?.line.split('\n')).toHaveLength(1);
  expect(rs.verifyBodies).toHaveLength(0);
  expect(existsSync(f.output)).toBe(false);
  expect(existsSync(f.outputSidecar)).toBe(false);
  expect(existsSync(join(f.dir, '.out.jsonl.reverify'))).toBe(false);
}

describe('§7 blank lines and a final line without \\n', () => {
  it('§7 blank and whitespace-only lines (incl. \\n\\n) in --inputs and --rollouts are skipped and a final line without \\n is fine (NeMo Gym crashes on a blank line)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeFileSync(f.inputs, `\n${inputLine({ t: 0 })}\n\n   \t\n${inputLine({ t: 1 })}\n \n${inputLine({ t: 2 })}`);
    writeFileSync(f.rollouts, `\n\n${successLine({ t: 2 })}\n  \n${successLine({ t: 0 })}\n\n\n${successLine({ t: 1 })}`);
    const { result, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0', '2:0']);
    for (const body of rs.verifyBodies) expect(body).toEqual(payload(body._ng_task_index as number));
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0']);
    expect(rows(f.outputSidecar)).toEqual([]);
    expect(result!.planned).toBe(3);
  });

  it('§7 blank and whitespace-only lines in the recovery sidecar (and in --rollouts while seeding) are skipped and a final line without \\n is fine (NeMo Gym crashes on a blank sidecar line)', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]), successes: [], failures: [] });
    writeFileSync(f.rollouts, `${successLine({ t: 0 })}\n\n  \n${successLine({ t: 1 })}`);
    writeFileSync(f.rolloutsSidecar, `\n${failureLine({ t: 2 })}\n\t\n\n${failureLine({ t: 3 })}`);
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0', '3:0']);
    expect(printed).toContain(seededLine(2, f));
    expect(readFileSync(f.output, 'utf8').startsWith(`${successLine({ t: 0 })}\n${successLine({ t: 1 })}\n`)).toBe(true);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(
      readFileSync(f.output, 'utf8')
        .split('\n')
        .slice(0, -1)
        .every((l) => l.trim() !== ''),
    ).toBe(true);
  });

  it('§7 an output whose complete last line has no \\n is fine on --resume: its key counts as done and the next row starts on a new line', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeFileSync(f.output, successLine({ t: 0 }));
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    expect(printed).toContain(resumeSummary(2, 1, 0, 0, 1));
    expect(readFileSync(f.output, 'utf8').startsWith(successLine({ t: 0 }) + '\n')).toBe(true);
    expect(keys(rows(f.output))).toEqual(['0:0', '1:0']);
  });
});

describe('§7 malformed JSON', () => {
  it.each([
    ['--inputs', 'inputs'],
    ['the recovery sidecar', 'sidecar'],
  ] as const)(
    '§7 malformed JSON in %s: "Error: <file>:<line>: malformed JSON (…)", exit 1, no /verify request, no output file (NeMo Gym crashes with a traceback)',
    async (_name, which) => {
      const rs = await server();
      const f = writeFixture(tempDir(), {
        inputs: tasks([0, 1, 2]),
        successes: [successLine({ t: 0 })],
        failures: [failureLine({ t: 1 }), failureLine({ t: 2 })],
      });
      const path = which === 'inputs' ? f.inputs : f.rolloutsSidecar;
      const good = which === 'inputs' ? [inputLine({ t: 0 }), inputLine({ t: 2 })] : [failureLine({ t: 1 }), failureLine({ t: 2 })];
      writeLines(path, [good[0], '{"_ng_task_index":1,"_ng_rollout_index":0,', good[1]]);
      if (which === 'inputs') writeLines(f.rollouts, [successLine({ t: 0 }), successLine({ t: 2 })]);
      const outcome = which === 'inputs' ? await plain(f, rs) : await recover(f, rs);
      expectStoppedBeforeWork(outcome, rs, f, `${path}:2`, /^Error: .*:2: malformed JSON \(.+\)/);
    },
  );

  it.each([
    ['NaN', '--rollouts', (l: string) => l.replace('"reward":1.0', '"reward":NaN')],
    ['Infinity', '--inputs', (l: string) => l.replace('"temperature":1.0', '"temperature":Infinity')],
    ['-Infinity', 'the recovery sidecar', (l: string) => l.replace('"reward":0.0', '"reward":-Infinity')],
  ] as const)(
    '§7 the token %s in %s is rejected as malformed JSON with file:line, exit 1, nothing sent or written (like NeMo Gym)',
    async (token, where, edit) => {
      const rs = await server();
      const f = writeFixture(tempDir(), {
        inputs: tasks([0, 1]),
        successes: [successLine({ t: 0 }), successLine({ t: 1 })],
        failures: [failureLine({ t: 0 }), failureLine({ t: 1 })],
      });
      let path: string;
      let outcome: RunOutcome;
      if (where === '--rollouts') {
        path = f.rollouts;
        writeLines(path, [successLine({ t: 0 }), edit(successLine({ t: 1 }))]);
        outcome = await plain(f, rs);
      } else if (where === '--inputs') {
        path = f.inputs;
        writeLines(path, [inputLine({ t: 0 }), edit(inputLine({ t: 1 }))]);
        outcome = await plain(f, rs);
      } else {
        path = f.rolloutsSidecar;
        writeLines(f.rollouts, []);
        writeLines(path, [failureLine({ t: 0 }), edit(failureLine({ t: 1 }))]);
        outcome = await recover(f, rs);
      }
      expect(readFileSync(path, 'utf8')).toContain(token);
      expectStoppedBeforeWork(outcome, rs, f, `${path}:2`, 'malformed JSON (');
    },
  );

  it.each([
    ['--inputs', 'inputs'],
    ['--rollouts', 'rollouts'],
    ['the recovery sidecar', 'sidecar'],
  ] as const)(
    '§7 invalid UTF-8 bytes in a row of %s are rejected with file:line, exit 1, before any /verify request and before any output file (like NeMo Gym; never decoded lossily to U+FFFD)',
    async (_name, which) => {
      const rs = await server();
      const f = writeFixture(tempDir(), {
        inputs: tasks([0, 1]),
        successes: [successLine({ t: 0 }), successLine({ t: 1 })],
        failures: [failureLine({ t: 0 }), failureLine({ t: 1 })],
      });
      let path: string;
      if (which === 'inputs') {
        path = f.inputs;
        writeFileSync(
          path,
          Buffer.concat([
            Buffer.from(inputLine({ t: 0 }) + '\n'),
            withInvalidUtf8(inputLine({ t: 1 }), '"expected_answer":"'),
            Buffer.from('\n'),
          ]),
        );
      } else if (which === 'rollouts') {
        path = f.rollouts;
        writeFileSync(
          path,
          Buffer.concat([Buffer.from(successLine({ t: 0 }) + '\n'), withInvalidUtf8(successLine({ t: 1 }), 'boxed{'), Buffer.from('\n')]),
        );
      } else {
        path = f.rolloutsSidecar;
        writeLines(f.rollouts, []);
        writeFileSync(
          path,
          Buffer.concat([Buffer.from(failureLine({ t: 0 }) + '\n'), withInvalidUtf8(failureLine({ t: 1 }), 'boxed{'), Buffer.from('\n')]),
        );
      }
      const outcome = which === 'sidecar' ? await recover(f, rs) : await plain(f, rs);
      expectStoppedBeforeWork(outcome, rs, f, `${path}:2`, /UTF-8/i);
    },
  );

  it('§7 a malformed line of the output (not its last line) on --resume: "<file>:<line>: malformed JSON", exit 1, nothing sent, the output untouched (NeMo Gym crashes with a traceback)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeLines(f.output, [successLine({ t: 0 }), '{"reward":1.0,"_ng_task_index":1,', successLine({ t: 2 })]);
    const before = readFileSync(f.output);
    const { error } = await plain(f, rs, { resume: true });
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`${f.output}:2: malformed JSON (`);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(readFileSync(f.output).equals(before)).toBe(true);
  });
});

describe('§7 missing keys', () => {
  it.each(['_ng_task_index', '_ng_rollout_index'])(
    '§7 a --rollouts row without %s: one line "<file>:<line>: rollout row has no …", exit 1, before any request (NeMo Gym crashes at the join)',
    async (key) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      writeLines(f.rollouts, [successLine({ t: 0 }), withoutField(successLine({ t: 1 }), key)]);
      expectStoppedBeforeWork(await plain(f, rs), rs, f, `${f.rollouts}:2`, `rollout row has no "${key}"`);
    },
  );

  it('§7 a judge-failed recovery sidecar row without _ng_task_index: the same one line with file:line, exit 1, before any request (in NeMo Gym the predicate tolerates it and the join crashes)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1]),
      successes: [successLine({ t: 0 })],
      failures: [withoutField(failureLine({ t: 1 }), '_ng_task_index')],
    });
    expectStoppedBeforeWork(await recover(f, rs), rs, f, `${f.rolloutsSidecar}:1`, 'rollout row has no "_ng_task_index"');
  });

  it.each(['_ng_task_index', '_ng_rollout_index'])(
    '§7 a materialized input row without %s: one line "<file>:<line>: materialized input row has no …", exit 1, before any request (NeMo Gym crashes loading the map)',
    async (key) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      writeLines(f.inputs, [inputLine({ t: 0 }), withoutField(inputLine({ t: 1 }), key)]);
      expectStoppedBeforeWork(await plain(f, rs), rs, f, `${f.inputs}:2`, `materialized input row has no "${key}"`);
    },
  );

  it('§7 a --rollouts row without response: one line "<file>:<line>: rollout row has no "response"", exit 1, before any request (NeMo Gym crashes)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.rollouts, [successLine({ t: 0 }), withoutField(successLine({ t: 1 }), 'response')]);
    expectStoppedBeforeWork(await plain(f, rs), rs, f, `${f.rollouts}:2`, 'rollout row has no "response"');
  });

  it.each([
    [
      'agent_ref.name',
      (l: string) =>
        l.replace('"agent_ref":{"type":"responses_api_agents","name":"agent_a"}', '"agent_ref":{"type":"responses_api_agents"}'),
    ],
    ['agent_ref', (l: string) => withoutField(l, 'agent_ref')],
  ] as const)(
    '§7 a materialized input row without %s: one line "<file>:<line>: materialized input row has no …", exit 1, before any request (NeMo Gym crashes before any request)',
    async (what, edit) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      writeLines(f.inputs, [inputLine({ t: 0 }), edit(inputLine({ t: 1 }))]);
      expectStoppedBeforeWork(await plain(f, rs), rs, f, `${f.inputs}:2`, `materialized input row has no "${what}"`);
    },
  );

  it('§7 a resources server reply without reward is written to the main output as a success (like NeMo Gym), stamped, and aggregated', async () => {
    const rs = await server({
      verify: (row) => (row._ng_task_index === 0 ? { status: 200, raw: '{"judgement":"unparseable"}' } : reward(1.0)),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const { result, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(lines(f.output)).toContain(
      '{"judgement":"unparseable","_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"type":"responses_api_agents","name":"agent_a"}}',
    );
    expect(rows(f.outputSidecar)).toEqual([]);
    expect(result).toMatchObject({ done: 2, failed: 0 });
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0']]);
  });
});

describe('§7 output rows without indices', () => {
  it("§7 output rows without both indices (written by another tool) are ignored by the --resume cache and kept byte for byte; the run does not crash on them (NeMo Gym's final sort does)", async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const foreign = ['{"reward":1.0,"note":"written by another tool"}', '{"reward":1.0,"_ng_task_index":0,"note":"one index only"}'];
    writeLines(f.output, foreign);
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect(printed).toContain(resumeSummary(2, 0, 0, 0, 2));
    expect(lines(f.output).slice(0, 2)).toEqual(foreign);
    expect(lines(f.output)).toHaveLength(4);
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0']]);
  });
});

describe('§7 duplicate keys', () => {
  it('§7 duplicate keys in --inputs: the last duplicate wins (the payload, its route and its stamps come from the last row), like NeMo Gym', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const last = inputLine({ t: 0, agent: 'agent_b' }).replace('"expected_answer":"A"', '"expected_answer":"B","which":"last"');
    writeLines(f.inputs, [
      inputLine({ t: 0 }).replace('"expected_answer":"A"', '"expected_answer":"A","which":"first"'),
      inputLine({ t: 1 }),
      last,
    ]);
    const { error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    const sent = rs.verifyBodies.find((b) => b._ng_task_index === 0)!;
    expect(sent).toEqual({ ...JSON.parse(last), response: JSON.parse(responseText(0)) });
    const out = rows(f.output).find((r) => r._ng_task_index === 0)!;
    expect(out.agent_ref).toEqual(agentRef('agent_b'));
  });

  it('§7 duplicate keys in --rollouts (plain run): the first row is verified, later duplicates are skipped with one "WARNING: skipped N source row(s) whose key appeared earlier in the file …" line, and the output holds each key once (NeMo Gym verifies every copy, then its aggregation fails)', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.rollouts, [
      withResponseId(successLine({ t: 0 }), 'resp_first'),
      successLine({ t: 1 }),
      withResponseId(successLine({ t: 0 }), 'resp_second'),
      withResponseId(successLine({ t: 0 }), 'resp_third'),
    ]);
    const { result, lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect((rs.verifyBodies.find((b) => b._ng_task_index === 0)!.response as { id: string }).id).toBe('resp_first');
    const warnings = printed.filter((l) => l.startsWith('WARNING: skipped'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].startsWith('WARNING: skipped 2 source row(s) whose key appeared earlier in the file')).toBe(true);
    expect(warnings[0]).toContain(`${f.rollouts}:3`);
    const out = keys(rows(f.output));
    expect(out.sort()).toEqual(['0:0', '1:0']);
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0']]);
    expect(result!.planned).toBe(2);
  });

  it('§7 seeding copies the first occurrence of each key of --rollouts: a repeated key (also when spelled 1.0 for 1) is not copied again, while "1" (a string) is another key and is copied, like NeMo Gym', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const asFloat = successLine({ t: 1 }, '0.0').replace('"_ng_task_index":1,', '"_ng_task_index":1.0,');
    const asString = successLine({ t: 1 }, '0.5').replace('"_ng_task_index":1,', '"_ng_task_index":"1",');
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1, 2]),
      successes: [successLine({ t: 0 }), successLine({ t: 0 }, '0.0'), successLine({ t: 1 }), asFloat, asString],
      failures: [failureLine({ t: 2 })],
    });
    const { lines: printed, error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(printed).toContain(seededLine(3, f));
    expect(sentKeys(rs)).toEqual(['2:0']);
    expect(lines(f.output).slice(0, 3)).toEqual([successLine({ t: 0 }), successLine({ t: 1 }), asString]);
    expect(lines(f.output)).toHaveLength(4);
  });

  it('§7 keys compare by value in a plain run: an input row keyed 1.0 joins the rollout keyed 1, and a later rollout keyed 1.0 repeats key 1 (skipped with the duplicate warning)', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.inputs, [inputLine({ t: 0 }), inputLine({ t: 1 }).replace('"_ng_task_index":1,', '"_ng_task_index":1.0,')]);
    writeLines(f.rollouts, [
      successLine({ t: 0 }),
      successLine({ t: 1 }),
      successLine({ t: 1 }).replace('"_ng_task_index":1,', '"_ng_task_index":1.0,'),
    ]);
    const { lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect(printed.filter((l) => l.startsWith('WARNING: skipped 1 source row(s) whose key appeared earlier in the file'))).toHaveLength(1);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0']);
  });

  it('§7 keys compare by value on --resume: an output row keyed 0.0 marks (0,0) done, one keyed "1" (a string) does not mark (1,0) done; the mixed keys do not crash the final reload (NeMo Gym\'s sort does: ours orders numbers before strings)', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeLines(f.output, [
      successLine({ t: 0 }).replace('"_ng_task_index":0,', '"_ng_task_index":0.0,'),
      successLine({ t: 1 }).replace('"_ng_task_index":1,', '"_ng_task_index":"1",'),
    ]);
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0', '2:0']);
    expect(printed).toContain(resumeSummary(3, 1, 0, 0, 2));
    expect(rs.aggregateBodies.map((b) => b.verify_responses.map((r) => r._ng_task_index))).toEqual([[0, 1, 2, '1']]);
  });
});

describe('§7 files and paths', () => {
  it('§7 --output equal to --rollouts, fresh run: refused with "Output file already exists", the rollouts untouched, nothing sent (like NeMo Gym)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const before = readFileSync(f.rollouts);
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.rollouts, servers: [rs.flag('rs')] });
    expect(error).toEqual({
      line: `Error: Output file already exists: '${f.rollouts}'. Pass --overwrite to delete it and start fresh, or --resume to continue from it.`,
      code: 1,
    });
    expect(readFileSync(f.rollouts).equals(before)).toBe(true);
    expect(existsSync(f.rolloutsSidecar)).toBe(false);
    expect(rs.verifyBodies).toHaveLength(0);
  });

  it.each([
    ['--rollouts', 'rollouts'],
    ['--inputs', 'inputs'],
  ] as const)(
    '§7 --output equal to %s with --overwrite: refused with one line saying it would delete that input, the file untouched, nothing sent (NeMo Gym deletes the input, then crashes)',
    async (flag, which) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      const target = which === 'rollouts' ? f.rollouts : f.inputs;
      const before = readFileSync(target);
      const { error, lines: printed } = await runReverify({
        inputs: f.inputs,
        rollouts: f.rollouts,
        output: target,
        servers: [rs.flag('rs')],
        overwrite: true,
      });
      expect(error?.code).toBe(1);
      expect(error?.line.startsWith(`Error: ${flag} '${target}' is also the output of this run, which it would delete (--overwrite)`)).toBe(
        true,
      );
      expect(error?.line.split('\n')).toHaveLength(1);
      expect(printed.filter((l) => l.startsWith('Deleted existing output file'))).toEqual([]);
      expect(existsSync(target)).toBe(true);
      expect(readFileSync(target).equals(before)).toBe(true);
      expect(rs.verifyBodies).toHaveLength(0);
    },
  );

  it.each(['--inputs', '--rollouts'] as const)(
    '§7 a missing %s file: one line naming the flag and the path, exit 1, and with --overwrite the old outputs are kept (NeMo Gym deletes them first, then crashes)',
    async (flag) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([0]) });
      const missing = join(f.dir, 'missing.jsonl');
      writeLines(f.output, [successLine({ t: 0 })]);
      writeLines(f.outputSidecar, [failureLine({ t: 0 })]);
      const main = readFileSync(f.output);
      const side = readFileSync(f.outputSidecar);
      const { error } = await runReverify({
        inputs: flag === '--inputs' ? missing : f.inputs,
        rollouts: flag === '--rollouts' ? missing : f.rollouts,
        output: f.output,
        servers: [rs.flag('rs')],
        overwrite: true,
      });
      expect(error).toEqual({ line: `Error: ${flag} file not found: '${missing}'`, code: 1 });
      expect(readFileSync(f.output).equals(main)).toBe(true);
      expect(readFileSync(f.outputSidecar).equals(side)).toBe(true);
      expect(rs.requests).toHaveLength(0);
    },
  );
});

describe('§7 servers', () => {
  it.each([
    ['answers 404 (no route)', 404, '{"detail":"Not Found"}', /has no GET \/reverify_mode route \(HTTP 404\)/],
    ['returns an unknown string', 200, '"maybe"', /answered GET \/reverify_mode with "maybe"/],
  ] as const)(
    '§7 GET /reverify_mode %s: one line naming the server, exit 1, before any file is touched — an existing output survives --overwrite (NeMo Gym crashes with a traceback)',
    async (_what, status, body, message) => {
      const mode = await server({ mode: { status, raw: body } });
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      writeLines(f.output, [successLine({ t: 0 })]);
      const before = readFileSync(f.output);
      const { error } = await runReverify({
        inputs: f.inputs,
        rollouts: f.rollouts,
        output: f.output,
        servers: [`my_rs=${mode.url}`],
        overwrite: true,
      });
      expect(error?.code).toBe(1);
      expect(error?.line).toContain(`resources server 'my_rs'`);
      expect(error?.line).toMatch(message);
      expect(error?.line.split('\n')).toHaveLength(1);
      expect(mode.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /reverify_mode']);
      expect(readFileSync(f.output).equals(before)).toBe(true);
      expect(existsSync(f.outputSidecar)).toBe(false);
      expect(existsSync(join(f.dir, '.out.jsonl.reverify'))).toBe(false);
    },
  );
});

describe('§7 routing outcomes of odd result bodies', () => {
  let rs: ScriptedServer;
  let f: Fixture;
  let outcome: RunOutcome;
  const stamps = (t: number) => `"_ng_task_index":${t},"_ng_rollout_index":0,"agent_ref":{"type":"responses_api_agents","name":"agent_a"}`;
  beforeAll(async () => {
    const replies: Record<number, string> = {
      0: '{"reward":0.5,"_ng_failure_class":null}',
      1: '{"reward":0.0,"_ng_failure_class":""}',
      2: '{"reward":1.0,"_ng_failure_terminal":true}',
      3: '{"reward":1.0,"_ng_task_index":99,"_ng_rollout_index":7,"agent_ref":{"name":"impostor"},"extra":1}',
    };
    rs = await startScriptedServer({ verify: (row) => ({ status: 200, raw: replies[row._ng_task_index as number] }) });
    f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]) });
    outcome = await plain(f, rs);
    await rs.close();
  });

  it('§7 _ng_failure_class: null is a success: the row goes to the main output (like NeMo Gym)', () => {
    expect(outcome.error).toBeNull();
    expect(lines(f.output)).toContain(`{"reward":0.5,"_ng_failure_class":null,${stamps(0)}}`);
  });

  it('§7 _ng_failure_class: "" (empty, non-null) goes to the failures sidecar (like NeMo Gym)', () => {
    expect(lines(f.outputSidecar)).toEqual([`{"reward":0.0,"_ng_failure_class":"",${stamps(1)}}`]);
  });

  it('§7 _ng_failure_terminal: true without a failure class is a success: the row goes to the main output (like NeMo Gym)', () => {
    expect(lines(f.output)).toContain(`{"reward":1.0,"_ng_failure_terminal":true,${stamps(2)}}`);
  });

  it("§7 RS-provided _ng_task_index/_ng_rollout_index/agent_ref are overwritten in place by the payload's values (like NeMo Gym)", () => {
    expect(lines(f.output)).toContain(`{"reward":1.0,${stamps(3)},"extra":1}`);
    expect(readFileSync(f.output, 'utf8')).not.toContain('impostor');
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '2:0', '3:0']);
    expect(outcome.result).toMatchObject({ done: 3, failed: 1, dropped: 0 });
  });
});

describe('§7 size: integers above 2^53', () => {
  it('§7 integers above 2^53 in an input row and in the RS reply survive byte for byte into the /verify body, the output row and the /aggregate_metrics body (a JSON.parse round trip would round them)', async () => {
    const rs = await server({
      verify: () => ({ status: 200, raw: '{"reward":1.0,"big":12345678901234567890,"nested":{"n":-98765432109876543210}}' }),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    writeLines(f.inputs, [inputLine({ t: 0 }).replace('"expected_answer":"A"', '"expected_answer":"A","big":12345678901234567890')]);
    const { error } = await plain(f, rs);
    expect(error).toBeNull();
    const verifyTexts = rs.requests.filter((r) => r.method === 'POST' && r.url === '/verify').map((r) => r.text);
    expect(verifyTexts).toHaveLength(1);
    expect(verifyTexts[0]).toContain('"big":12345678901234567890');
    expect(lines(f.output)).toEqual([
      '{"reward":1.0,"big":12345678901234567890,"nested":{"n":-98765432109876543210},' +
        '"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"type":"responses_api_agents","name":"agent_a"}}',
    ]);
    const aggregateTexts = rs.requests.filter((r) => r.url === '/aggregate_metrics').map((r) => r.text);
    expect(aggregateTexts).toHaveLength(1);
    expect(aggregateTexts[0]).toContain('"big":12345678901234567890');
    expect(aggregateTexts[0]).toContain('"n":-98765432109876543210');
  });

  it('§7 integers above 2^53 in a seeded success row are copied byte for byte (recovery)', async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const big = successLine({ t: 0 }).replace('"reward":1.0', '"reward":1.0,"big":12345678901234567890');
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]), successes: [big], failures: [failureLine({ t: 1 })] });
    const { error } = await recover(f, rs);
    expect(error).toBeNull();
    expect(lines(f.output)[0]).toBe(big);
  });
});

describe('§7 a property repeated within one row', () => {
  it('§7 a property repeated within one --rollouts row: the last value wins, for its key and for the response that is sent (like orjson)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    writeLines(f.rollouts, ['{"_ng_task_index":9,"response":{"id":"stale"},' + successLine({ t: 0 }).slice(1)]);
    const { error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0']);
    expect(rs.verifyBodies[0]).toEqual(payload(0));
  });
});

describe('§7 counting: the attempt cap from the environment', () => {
  it.each(['0', 'abc'])(
    '§7 NEMO_GYM_MAX_ROLLOUT_ATTEMPTS=%s: one WARNING line and the cap falls back to 3 (a key with 3 sidecar rows is maxed out, one with 2 runs)',
    async (value) => {
      const rs = await server();
      const f = writeFixture(tempDir(), { inputs: tasks([7, 8]) });
      writeLines(f.outputSidecar, [
        failureLine({ t: 7 }),
        failureLine({ t: 8 }),
        failureLine({ t: 7 }),
        failureLine({ t: 8 }),
        failureLine({ t: 8 }),
      ]);
      const saved = process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS;
      process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS = value;
      try {
        const { lines: printed, error } = await plain(f, rs, { resume: true, maxAttempts: undefined, rejudgeDelayMs: 0 });
        expect(error).toBeNull();
        const warnings = printed.filter((l) => l.startsWith('WARNING:') && l.includes('NEMO_GYM_MAX_ROLLOUT_ATTEMPTS'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain(`'${value}'`);
        expect(warnings[0]).toMatch(/default 3\b/);
        expect(sentKeys(rs)).toEqual(['7:0']);
        expect(printed).toContain(resumeSummary(2, 0, 0, 1, 1));
      } finally {
        if (saved === undefined) delete process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS;
        else process.env.NEMO_GYM_MAX_ROLLOUT_ATTEMPTS = saved;
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** `line` without its top-level member `key` (which must be there); every other byte kept. */
function withoutField(line: string, key: string): string {
  expect(topLevelSpans(line).has(key)).toBe(true);
  return setFields(line, [], [key]);
}

/** `line` as bytes with two bytes that are not UTF-8 (0xff 0xfe) inserted right after `after` (inside a JSON string). */
function withInvalidUtf8(line: string, after: string): Buffer {
  const at = line.indexOf(after);
  expect(at).toBeGreaterThanOrEqual(0);
  const cut = at + after.length;
  return Buffer.concat([Buffer.from(line.slice(0, cut)), Buffer.from([0xff, 0xfe]), Buffer.from(line.slice(cut))]);
}
