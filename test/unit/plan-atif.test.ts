/**
 * The ATIF plan activity on its own: the order in which NeMo Gym 0.7.0 reports problems (input JSON,
 * manifest rows, input keys, then entries in order, each entry's checks in order), the texts of the
 * input and join errors, the preflight facts, --limit, the sort on disk, and nothing left behind.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { discardPlan } from '../../activities/discard-plan.js';
import { planAtif, type AtifPlanOutcome, type AtifPlanRequest } from '../../activities/plan-atif.js';
import type { RoutingTable } from '../../src/config/routing.js';
import { readPlanRange } from '../../src/planning/plan-file.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-plan-atif-');
const FIXTURES = join(import.meta.dirname, '../fixtures/atif');
const routing: RoutingTable = {
  agents: { a: 'rs_a', b: 'rs_b' },
  catchAll: null,
  servers: { rs_a: 'http://a', rs_b: 'http://b' },
  taskSources: [],
};

const input = (t: number, r: number, agent = 'a') =>
  `{"responses_create_params":{"input":[]},"agent_ref":{"name":"${agent}"},"_ng_task_index":${t},"_ng_rollout_index":${r}}`;
const entry = (file: string, t: number, r: number) => JSON.stringify({ trajectory_path: file, _ng_task_index: t, _ng_rollout_index: r });

/** A run directory: trajectories copied from the fixtures, the inputs and the manifest as given. */
function setup(inputs: string[], entries: string[], files: Record<string, string> = {}): AtifPlanRequest & { dir: string } {
  const dir = tmp.freshDir();
  mkdirSync(join(dir, 't'));
  for (const [name, fixture] of Object.entries({
    'text.json': 'text-only.json',
    'tools.json': 'tool-calls.json',
    'plain.json': 'no-trajectory-id.json',
    ...files,
  })) {
    writeFileSync(join(dir, 't', name), readFileSync(join(FIXTURES, fixture)));
  }
  writeFileSync(join(dir, 'in.jsonl'), inputs.join('\n') + '\n');
  writeFileSync(join(dir, 't', 'm.jsonl'), entries.join('\n') + '\n');
  return {
    dir,
    inputsPath: join(dir, 'in.jsonl'),
    manifestPath: join(dir, 't', 'm.jsonl'),
    outputPath: join(dir, 'out', 'o.jsonl'),
    overwrite: false,
    routing,
    limit: null,
  };
}

const plan = (req: AtifPlanRequest): Promise<AtifPlanOutcome> => new MockActivityEnvironment().run(planAtif, req);

async function problem(req: AtifPlanRequest & { dir: string }): Promise<string> {
  const message = await plan(req).then(
    () => 'planned',
    (err: Error) => err.message,
  );
  expect(existsSync(join(req.dir, 'out'))).toBe(false); // nothing left behind
  return message.replaceAll(req.dir, '<d>');
}

describe('the ATIF plan', () => {
  it('plans each entry with its manifest line, input line and trajectory, and what the preflight needs', async () => {
    const req = setup([input(0, 0), input(1, 0, 'b'), input(5, 5)], [entry('text.json', 0, 0), '', entry('tools.json', 1, 0)]);
    const p = await plan(req);
    expect([p.rows, p.inputFormat, p.sourcePath, p.rowsPerAgent]).toEqual([2, 'atif', req.manifestPath, { a: 1, b: 1 }]);
    expect(p.preflight).toEqual({ servers: ['rs_a', 'rs_b'], functionCallServers: ['rs_b'], unroutable: null });
    const records = await readPlanRange(p.planPath, 0, 2, p.recordBytes);
    expect(records.map((r) => [r.sourceLine, r.trajectoryLength])).toEqual([
      [1, readFileSync(join(req.dir, 't', 'text.json')).length],
      [3, readFileSync(join(req.dir, 't', 'tools.json')).length],
    ]);
    // No attempts before the run: an ATIF run's sidecar is new (or deleted by --overwrite).
    expect(readFileSync(p.attemptsPath!)).toEqual(Buffer.alloc(2 * 4));
    expect(p.messages).toEqual([
      `WARNING: ATIF manifest ${req.manifestPath} has 2 of 2 entries without expected_sha256; Gym will record each observed source hash but cannot compare those files with a manifest-pinned digest.`,
    ]);
    await discardPlan(p.workDir, p.createdDir);
    expect(existsSync(join(req.dir, 'out'))).toBe(false);
  });

  it('reports problems in 0.7.0 order: input JSON, manifest rows, input keys, then entries', async () => {
    const entries = [entry('text.json', 0, 0), entry('missing.json', 1, 0)];
    expect(await problem(setup([input(0, 0), '{"x": 1, "x": 2}'], ['{"bad": 1}']))).toBe(
      "invalid materialized input row 2 in <d>/in.jsonl: duplicate object key 'x'",
    );
    expect(await problem(setup(['[1]'], entries))).toBe('materialized input row 1 in <d>/in.jsonl is not an object');
    expect(await problem(setup([input(-1, 0)], [...entries, '{"bad": 1}']))).toBe(
      'invalid ATIF manifest row 3 in <d>/t/m.jsonl: trajectory_path: Field required (and 3 more)',
    );
    expect(await problem(setup([input(0, 0), input(-1, 0)], entries))).toBe(
      'materialized input row 2 in <d>/in.jsonl has invalid _ng_task_index: -1',
    );
    expect(await problem(setup([input(0, 0), input(0, 1, ' ')], entries))).toBe(
      "materialized input row 2 in <d>/in.jsonl has invalid agent_ref.name: ' '",
    );
    expect(await problem(setup([input(0, 0), input(0, 0)], entries))).toBe('<d>/in.jsonl:2: duplicate materialized input key (0, 0)');
    expect(await problem(setup([input(0, 0), input(1, 0)], entries))).toMatch(
      /^<d>\/t\/m\.jsonl:2: could not read ATIF trajectory <d>\/t\/missing\.json: ENOENT/,
    );
  });

  it("reports an entry's first problem in 0.7.0's order, and nothing of the entries after it", async () => {
    const inputs = [input(0, 0), input(1, 0), input(2, 0)];
    // A repeated key is checked before the trajectory is read.
    expect(await problem(setup(inputs, [entry('text.json', 0, 0), entry('missing.json', 0, 0)]))).toBe(
      '<d>/t/m.jsonl:2: manifest maps materialized rollout (0, 0) more than once',
    );
    // A missing input comes after the trajectory's own checks, before its projection.
    expect(await problem(setup(inputs, [entry('text.json', 7, 0)]))).toBe(
      '<d>/t/m.jsonl:1: manifest entry <d>/t/text.json has no matching materialized input (7, 0)',
    );
    expect(await problem(setup(inputs, [entry('tools.json', 0, 0)]))).toBe(
      '<d>/t/m.jsonl:1: <d>/t/tools.json: Gym ATIF source task_index 1 conflicts with manifest value 0',
    );
    // The first entry with a problem wins; entries after it are not read.
    expect(await problem(setup(inputs, [entry('text.json', 0, 0), entry('plain.json', 9, 0), entry('missing.json', 2, 0)]))).toBe(
      '<d>/t/m.jsonl:2: manifest entry <d>/t/plain.json has no matching materialized input (9, 0)',
    );
    expect(await problem(setup(inputs, [entry('text.json', 0, 0), entry('text.json', 2, 0)]))).toBe(
      '<d>/t/m.jsonl:2: manifest uses ATIF source path <d>/t/text.json more than once',
    );
    expect(await problem(setup(inputs, [entry('text.json', 0, 0), entry('copy.json', 2, 0)], { 'copy.json': 'text-only.json' }))).toMatch(
      /^<d>\/t\/m\.jsonl:2: manifest uses ATIF source content [0-9a-f]{64} more than once$/,
    );
    expect(
      await problem(
        setup(
          [input(0, 0), '{"agent_ref":{"name":"a"},"_ng_task_index":2,"_ng_rollout_index":0,"responses_create_params":null}'],
          [entry('text.json', 0, 0), entry('plain.json', 2, 0)],
        ),
      ),
    ).toBe('<d>/t/m.jsonl:2: materialized input has no responses_create_params object');
  });

  it('reads only the first --limit entries; an unroutable selected row is left to the preflight', async () => {
    const req = setup(
      [input(0, 0), input(1, 0, 'nobody')],
      [entry('text.json', 0, 0), entry('tools.json', 1, 0), entry('missing.json', 2, 0)],
    );
    const p = await plan({ ...req, limit: 2, sortMaxRecords: 1 });
    expect(p.rows).toBe(2);
    expect(p.preflight.unroutable).toBe(
      `${req.manifestPath}:2: reverify: cannot find a resources server for row (agent_ref.name='nobody', task_source=None). Known agents: ['a', 'b'].`,
    );
    await discardPlan(p.workDir, p.createdDir);
  });

  it('refuses a trajectory that is a file the run writes', async () => {
    const req = setup([input(0, 0)], [entry('../out/o.jsonl', 0, 0)]);
    mkdirSync(join(req.dir, 'out'));
    writeFileSync(join(req.dir, 'out', 'o.jsonl'), '');
    const message = await plan(req).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).toContain(
      `the trajectory of ${req.manifestPath}:1 '${join(req.dir, 'out', 'o.jsonl')}' is also the output of this run`,
    );
  });

  it('clears a stale work directory, unless a trajectory of the manifest lies in it', async () => {
    const req = setup([input(0, 0)], [entry('text.json', 0, 0)]);
    const workDir = join(req.dir, 'out', '.o.jsonl.reverify');
    mkdirSync(workDir, { recursive: true });
    writeFileSync(join(workDir, 'r0-b0.main.part'), 'stale');
    const p = await plan(req);
    expect(existsSync(join(workDir, 'r0-b0.main.part'))).toBe(false);
    writeFileSync(join(workDir, 'text.json'), readFileSync(join(FIXTURES, 'text-only.json')));
    writeFileSync(req.manifestPath, entry(join(workDir, 'text.json'), 0, 0) + '\n');
    const message = await plan(req).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).toBe(
      `${req.manifestPath}:1: the trajectory '${join(workDir, 'text.json')}' is inside the work directory of this run ('${workDir}'), which it deletes: move the file, or choose another --output`,
    );
    expect(existsSync(join(workDir, 'text.json'))).toBe(true);
    await discardPlan(p.workDir, null);
  });
});
