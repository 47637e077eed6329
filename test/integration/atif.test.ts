/**
 * ATIF runs (`--input-format atif`) through the real workflow, a real Temporal server and real
 * HTTP resources servers: what `/verify` and `/aggregate_metrics` receive, what the outputs hold
 * (provenance, kill-shaped rows, re-judged rows), and proven trajectory reads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/atif/trajectory.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { atifOptions, atifRun, editManifest, manifestEntries } from '../helpers/atif-fixtures.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runInProcess as run } from '../helpers/run-fixtures.js';
import { byTask, echo, reward, startScriptedServer, type Row } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('atif');
const scripted = closedAfterEach(startScriptedServer);
const reference = closedAfterEach(startReferenceServer);

const provenanceOf = (r: Row) => r._ng_atif_provenance as Record<string, unknown>;

describe('ATIF runs', () => {
  it('sends each projected trajectory with its materialized input and stamps the provenance on results only', async () => {
    const rs = await scripted({ verify: (row) => echo(row, { reward: 1.0 }) });
    const d = await atifRun(tempDir(), rs.port, { tasks: 4, repeats: 2 });
    const { result, error } = await run(atifOptions(d));
    expect(error).toBeNull();
    expect(result!.done).toBe(8);
    const inputs = new Map(readRows(d.inputsPath).map((r) => [`${r._ng_task_index}:${r._ng_rollout_index}`, r]));
    for (const body of rs.verifyBodies) {
      expect(body).not.toHaveProperty('_ng_atif_provenance');
      const { response, ...rest } = body;
      // The materialized row is authoritative for everything but `response`, which is the projection.
      const { response: _, ...input } = inputs.get(`${body._ng_task_index}:${body._ng_rollout_index}`)!;
      expect(rest).toEqual(input);
      const r = response as { id: string; object: string; output: Array<{ type: string; content?: Array<{ text: string }> }> };
      expect([r.id.startsWith('atif_'), r.object]).toEqual([true, 'response']);
      expect(r.output.at(-1)!.content![0].text).toMatch(/\\boxed\{[A-D]\}/);
    }
    const entries = new Map(manifestEntries(d).map((e) => [`${e._ng_task_index}:${e._ng_rollout_index}`, e]));
    for (const row of readRows(d.output)) {
      const key = `${row._ng_task_index}:${row._ng_rollout_index}`;
      const bytes = readFileSync(join(d.atifDir, entries.get(key)!.trajectory_path));
      expect(provenanceOf(row)).toEqual({
        trajectory_id: `reverify-demo:${key}`,
        session_id: 'reverify-demo',
        source_sha256: sha256Hex(bytes),
        schema_version: 'ATIF-v1.7',
        projection_status: 'complete',
      });
    }
    for (const b of rs.aggregateBodies) for (const r of b.verify_responses) expect(r).not.toHaveProperty('_ng_atif_provenance');
    expect(rs.aggregateBodies.flatMap((b) => b.verify_responses)).toHaveLength(8);
  });

  it('grades the trajectories of a run as its rollouts were graded (reference server)', async () => {
    const rs = await reference({ port: 0, seed: 5 });
    const dir = tempDir();
    const d = await atifRun(dir, rs.port, { tasks: 12, repeats: 3 });
    const gym = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: join(dir, 'gym.jsonl'),
      configs: [d.config],
      maxAttempts: 1,
    });
    const atif = await run(atifOptions(d));
    expect([gym.error, atif.error]).toEqual([null, null]);
    const rewards = (path: string) =>
      Object.fromEntries(readRows(path).map((r) => [`${r._ng_task_index}:${r._ng_rollout_index}`, r.reward]));
    expect(rewards(d.output)).toEqual(rewards(join(dir, 'gym.jsonl')));
    expect(Object.keys(rewards(d.output))).toHaveLength(36);
  });

  it('keeps no-persist (kill-shaped) results in the sidecar, classed kill_shaped unless they have a class', async () => {
    const rs = await scripted({
      verify: byTask({
        0: reward(0.0, { _ng_no_persist: true }),
        1: reward(0.0, { _ng_no_persist: true, _ng_failure_class: 'timeout_exceeded' }),
        2: reward(0.0, { _ng_failure_class: '' }),
      }),
    });
    const d = await atifRun(tempDir(), rs.port, { tasks: 4, repeats: 1 });
    const { result, error } = await run(atifOptions(d));
    expect(error).toBeNull();
    expect([result!.done, result!.failed, result!.dropped]).toEqual([1, 3, 0]);
    const side = readRows(join(d.output.replace(/\.jsonl$/, '_failures.jsonl')));
    const byKey = Object.fromEntries(side.map((r) => [r._ng_task_index, r]));
    expect(byKey[0]).toMatchObject({ _ng_no_persist: true, _ng_failure_class: 'kill_shaped' });
    expect(byKey[1]).toMatchObject({ _ng_no_persist: true, _ng_failure_class: 'timeout_exceeded' });
    expect(byKey[2]).toMatchObject({ _ng_failure_class: 'kill_shaped' });
    for (const r of side) expect(provenanceOf(r).projection_status).toBe('complete');
    expect(keysOf(readRows(d.output))).toEqual(['3:0']);
  });

  it('re-judges judge failures in rounds; every attempt carries its provenance', async () => {
    const rs = await scripted({
      verify: (row, attempt) =>
        attempt === 0 && row._ng_task_index === 1 ? reward(0.0, { _ng_failure_class: 'judge_failed' }) : reward(1.0),
    });
    const d = await atifRun(tempDir(), rs.port, { tasks: 3, repeats: 2 });
    const { result, error } = await run(atifOptions(d, { maxAttempts: 3, rejudgeDelayMs: 0, batchSize: 2 }));
    expect(error).toBeNull();
    expect(result!.rounds).toBe(2);
    // Counted in rollouts: 6 keys, all scored, none missing, over 8 attempts.
    expect(result).toMatchObject({ keys: 6, planned: 8, missing: 0, scored: 6 });
    expect(keysOf(readRows(d.output)).sort()).toEqual(['0:0', '0:1', '1:0', '1:1', '2:0', '2:1']);
    const side = readRows(join(d.output.replace(/\.jsonl$/, '_failures.jsonl')));
    expect(keysOf(side).sort()).toEqual(['1:0', '1:1']);
    for (const r of [...side, ...readRows(d.output)])
      expect(provenanceOf(r).trajectory_id).toBe(`reverify-demo:${r._ng_task_index}:${r._ng_rollout_index}`);
  });

  it('resolves relative paths against the manifest directory, takes absolute ones, and reads only the first --limit entries', async () => {
    const rs = await scripted();
    const dir = tempDir();
    const d = await atifRun(dir, rs.port, { tasks: 3, repeats: 1 });
    editManifest(d, (e, i) => {
      if (i === 0) return { ...e, trajectory_path: join(d.atifDir, e.trajectory_path) };
      if (i === 1) return { ...e, trajectory_path: join('..', relative(dir, d.atifDir), e.trajectory_path) };
      return { ...e, trajectory_path: 'missing.json' }; // beyond --limit: never read
    });
    const { result, error } = await run(atifOptions(d, { limit: 2 }));
    expect(error).toBeNull();
    expect(result!.done).toBe(2);
    // Sent concurrently: compared as sets.
    expect(keysOf(rs.verifyBodies).sort()).toEqual(
      manifestEntries(d)
        .slice(0, 2)
        .map((e) => `${e._ng_task_index}:${e._ng_rollout_index}`)
        .sort(),
    );
  });

  it('a trajectory changed after the plan stops the run before its row is sent', async () => {
    let d!: Awaited<ReturnType<typeof atifRun>>;
    let changed = '';
    const rs = await scripted({
      verify: (row) => {
        if (changed === '') {
          const last = manifestEntries(d).at(-1)!;
          changed = join(d.atifDir, last.trajectory_path);
          writeFileSync(changed, readFileSync(changed, 'utf8').replace('"version": "1.0"', '"version": "1.1"'));
        }
        return echo(row, { reward: 1.0 });
      },
    });
    d = await atifRun(tempDir(), rs.port, { tasks: 3, repeats: 2 });
    const { error } = await run(atifOptions(d, { batchSize: 1, concurrency: 1 }));
    expect(error!.code).toBe(1);
    expect(error!.line).toContain(
      `'${changed}' changed after this run planned it: the trajectory of ${d.manifestPath}:6 is not the row that was planned`,
    );
    // The way on is one an ATIF run accepts: --overwrite, not --resume (which it refuses).
    expect(error!.line).toContain('run the same command with --overwrite (an ATIF run cannot be resumed)');
    expect(error!.line).not.toContain('--resume');
    expect(rs.verifyBodies.length).toBeLessThan(6);
  });
});
