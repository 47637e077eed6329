/**
 * No file a run writes or deletes (main output, sidecar, aggregate metrics, coverage, work directory)
 * may be one of its inputs, under any name: the run stops with one line naming the flag and the path
 * before anything is written or sent. Whole runs against the shared dev server and a scripted
 * resources server.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify, type RunOutcome } from '../helpers/run-fixtures.js';
import { reward, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import { failureLine, successLine, tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('input-aliases');

const server = closedAfterEach(startScriptedServer);

/** Refused with exit 1 and one line starting `Error: <flag> '<path>'`; nothing sent or written; `input` keeps its bytes. */
function expectRefused(
  outcome: RunOutcome,
  rs: ScriptedServer,
  flag: string,
  shown: string,
  input: string,
  before: Buffer,
  notWritten: string[],
): void {
  expect(outcome.error?.code).toBe(1);
  expect(outcome.error?.line.startsWith(`Error: ${flag} '${shown}' `)).toBe(true);
  expect(outcome.error?.line).toContain('choose another --output');
  expect(outcome.error?.line.split('\n')).toHaveLength(1);
  expect(rs.verifyBodies).toHaveLength(0);
  expect(rs.aggregateBodies).toHaveLength(0);
  expect(readFileSync(input).equals(before)).toBe(true);
  for (const p of notWritten) expect(existsSync(p)).toBe(false);
}

describe('an input that is also a file the run writes', () => {
  it('--inputs X_aggregate_metrics.json -o X.jsonl: refused before anything is written; the inputs keep their bytes', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]), outputName: 'run' });
    renameSync(f.inputs, f.metrics);
    const before = readFileSync(f.metrics);
    const outcome = await runReverify({ inputs: f.metrics, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')] });
    expectRefused(outcome, rs, '--inputs', f.metrics, f.metrics, before, [f.output, f.outputSidecar]);
    expect(outcome.error?.line).toContain('aggregate metrics');
  });

  it('-o equal to --inputs on a fresh run: refused at once as the inputs, not first "already exists … --overwrite"', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const before = readFileSync(f.inputs);
    const outcome = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.inputs, servers: [rs.flag('rs')] });
    expectRefused(outcome, rs, '--inputs', f.inputs, f.inputs, before, [join(f.dir, 'inputs_failures.jsonl')]);
    expect(outcome.error?.line).toBe(
      `Error: --inputs '${f.inputs}' is also the output of this run, which it would write: choose another --output`,
    );
  });

  it('the sidecar of --output is a symlink to --rollouts (--resume): refused, the rollouts untouched', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeFileSync(f.output, successLine({ t: 0 }) + '\n');
    symlinkSync(f.rollouts, f.outputSidecar);
    const before = readFileSync(f.rollouts);
    const outputBefore = readFileSync(f.output);
    const outcome = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')], resume: true });
    expectRefused(outcome, rs, '--rollouts', f.rollouts, f.rollouts, before, []);
    expect(outcome.error?.line).toContain(f.outputSidecar);
    expect(readFileSync(f.output).equals(outputBefore)).toBe(true);
  });

  it('the metrics path is a hard link of --inputs, and -o has a `..` segment: refused, the inputs untouched', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    linkSync(f.inputs, f.metrics);
    mkdirSync(join(f.dir, 'sub'));
    const before = readFileSync(f.inputs);
    const output = join(f.dir, 'sub', '..', 'out.jsonl');
    const outcome = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output, servers: [rs.flag('rs')] });
    expectRefused(outcome, rs, '--inputs', f.inputs, f.inputs, before, [f.output, f.outputSidecar]);
    expect(outcome.error?.line).toContain(f.metrics);
  });

  it('an input inside the work directory the run deletes at its end: refused', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const workDir = join(f.dir, '.out.jsonl.reverify');
    mkdirSync(workDir);
    const inputs = join(workDir, 'inputs.jsonl');
    copyFileSync(f.inputs, inputs);
    const before = readFileSync(inputs);
    const outcome = await runReverify({ inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')] });
    expectRefused(outcome, rs, '--inputs', inputs, inputs, before, [f.output, f.outputSidecar]);
    expect(outcome.error?.line).toContain('work directory');
  });

  it('a --config file that is the metrics path of the output: refused before the run starts', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    // JSON is YAML: a resources-only config, named like the metrics file of -o.
    writeFileSync(
      f.metrics,
      JSON.stringify({ rs: { resources_servers: { mcqa: { entrypoint: 'app.py', host: '127.0.0.1', port: rs.port } } } }),
    );
    const before = readFileSync(f.metrics);
    const outcome = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [f.metrics] });
    expectRefused(outcome, rs, '--config', f.metrics, f.metrics, before, [f.output, f.outputSidecar]);
    expect(rs.requests).toHaveLength(0);
  });

  it("--judge-failed-only --append into the run's own rollouts still works, but not with --inputs as its metrics file", async () => {
    const rs = await server({ verify: () => reward(0.9) });
    const f = writeFixture(tempDir(), {
      inputs: tasks([0, 1]),
      successes: [successLine({ t: 0 })],
      failures: [failureLine({ t: 1 })],
      outputName: 'rollouts',
    });
    const inputs = join(f.dir, 'rollouts_aggregate_metrics.json');
    renameSync(f.inputs, inputs);
    const before = readFileSync(inputs);
    const refused = await runReverify({
      inputs,
      rollouts: f.rollouts,
      output: f.rollouts,
      servers: [rs.flag('rs')],
      judgeFailedOnly: true,
      append: true,
    });
    expectRefused(refused, rs, '--inputs', inputs, inputs, before, []);

    copyFileSync(inputs, f.inputs);
    const ok = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.rollouts,
      servers: [rs.flag('rs')],
      judgeFailedOnly: true,
      append: true,
    });
    expect(ok.error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(1);
  });
});

/** A resources-only NeMo Gym config (JSON is YAML) routing to `rs`. */
function writeConfig(path: string, rs: ScriptedServer): void {
  writeFileSync(path, JSON.stringify({ rs: { resources_servers: { mcqa: { entrypoint: 'app.py', host: '127.0.0.1', port: rs.port } } } }));
}

describe('an input named like the run report, <stem>_report.html (issue 35)', () => {
  const cases = [
    { flag: '--inputs', force: false },
    { flag: '--rollouts', force: false },
    { flag: '--config', force: false },
    { flag: '--inputs', force: true },
    { flag: '--rollouts', force: true },
    { flag: '--config', force: true },
  ];
  for (const { flag, force } of cases) {
    const name = `${force ? 'unsafe_' : ''}out_report.html`;
    it(`${flag} ${name}${force ? ' under --force (the guard answers unsupported)' : ''}: refused at the start, the file unchanged`, async () => {
      const rs = await server({ mode: force ? 'unsupported' : 'stateless' });
      const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
      const report = join(f.dir, name);
      const config = join(f.dir, 'gym.yaml');
      if (flag === '--inputs') renameSync(f.inputs, report);
      if (flag === '--rollouts') renameSync(f.rollouts, report);
      writeConfig(flag === '--config' ? report : config, rs);
      const before = readFileSync(report);
      const outcome = await runReverify({
        inputs: flag === '--inputs' ? report : f.inputs,
        rollouts: flag === '--rollouts' ? report : f.rollouts,
        output: f.output,
        configs: [flag === '--config' ? report : config],
        force,
      });
      expectRefused(outcome, rs, flag, report, report, before, [f.output, f.outputSidecar, join(f.dir, 'unsafe_out.jsonl')]);
      expect(outcome.error?.line).toContain('the HTML report of this run');
    });
  }
});
