/**
 * Spec §6 (nemo-gym-contract.md), resume end to end (114–118) and the resume rule of output path
 * preparation (88), as whole runs of `reverify run --resume` against the shared real Temporal dev
 * server and a scripted resources server that records what it receives.
 *
 * NeMo Gym "returns" the sorted rows; we return counts, so "return = …, sorted" is checked on what
 * the resources server receives on /aggregate_metrics (the same sorted reload, §4.11).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { keyText, reward, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import { keys, lines, rows, successLine, tasks, timeoutLine, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { plain, sentKeys } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('spec-checklist-resume');

const server = closedAfterEach(startScriptedServer);

const aggregated = (s: ScriptedServer) => s.aggregateBodies.map((b) => b.verify_responses.map((r) => [keyText(r), r.reward]));

describe('§6 output path preparation with --resume (88)', () => {
  it('§6.88 given existing output and sidecar with resume (and overwrite, which is ignored), nothing is deleted or raised: both keep their bytes and only new rows are appended', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    const oldMain = successLine({ t: 0 }) + '\n';
    const oldSide = timeoutLine({ t: 1 }) + '\n';
    writeFileSync(f.output, oldMain);
    writeFileSync(f.outputSidecar, oldSide);
    const { lines: printed, error } = await plain(f, rs, { resume: true, overwrite: true });
    expect(error).toBeNull();
    expect(printed.filter((l) => l.startsWith('Deleted existing output file'))).toEqual([]);
    expect(sentKeys(rs)).toEqual(['2:0']);
    expect(readFileSync(f.output, 'utf8').startsWith(oldMain)).toBe(true);
    expect(keys(rows(f.output))).toEqual(['0:0', '2:0']);
    expect(readFileSync(f.outputSidecar, 'utf8')).toBe(oldSide);
  });
});

describe('§6 resume end to end (114–118)', () => {
  it('§6.114 output already holding T=0 (reward 1.0), pairs T=0,1, resume: only T=1 is sent; the file has T=0 once (reward 1.0 kept) and T=1; the reloaded rows are both, sorted', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    const { lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['1:0']);
    const out = lines(f.output);
    expect(out[0]).toBe(successLine({ t: 0 })); // byte for byte, `"reward":1.0` kept
    expect(rows(f.output).map((r) => [keyText(r), r.reward])).toEqual([
      ['0:0', 1],
      ['1:0', 0.5],
    ]);
    expect(aggregated(rs)).toEqual([
      [
        ['0:0', 1],
        ['1:0', 0.5],
      ],
    ]);
    expect(printed).toContain(
      [
        'Resumed from cache. Found:',
        '- 2 total rows to be re-verified',
        '- 1 rows already done (in main jsonl)',
        '- 0 sidecar-terminal (for example skipped) → not retried',
        '- 0 hit max_attempts → not retried',
        '- 1 rows that still need to be run',
      ].join('\n'),
    );
  });

  it('§6.115 the same with overwrite and no resume: both are re-sent, the file holds only the fresh rows (reward 0.5), and they are what is reloaded', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    const { result, error } = await plain(f, rs, { overwrite: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect(
      rows(f.output)
        .map((r) => [keyText(r), r.reward])
        .sort(),
    ).toEqual([
      ['0:0', 0.5],
      ['1:0', 0.5],
    ]);
    expect(aggregated(rs)).toEqual([
      [
        ['0:0', 0.5],
        ['1:0', 0.5],
      ],
    ]);
    expect(result!.done).toBe(2);
  });

  it('§6.116 an existing output and neither overwrite nor resume: ConfigError "already exists", nothing sent, the file unchanged', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 0 })]);
    const before = readFileSync(f.output);
    const { error } = await plain(f, rs);
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`Output file already exists: '${f.output}'`);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(rs.aggregateBodies).toHaveLength(0);
    expect(readFileSync(f.output).equals(before)).toBe(true);
  });

  it('§6.117 resume with every key cached: nothing is sent, the file is intact, all cached rows are reloaded (and aggregated)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeLines(f.output, [successLine({ t: 2 }), successLine({ t: 0 }, '0.0'), successLine({ t: 1 })]);
    const before = readFileSync(f.output);
    const { result, lines: printed, error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(0);
    expect(readFileSync(f.output).equals(before)).toBe(true);
    expect(printed).toContain('WARNING: Nothing to be re-verified.');
    expect(aggregated(rs)).toEqual([
      [
        ['0:0', 0],
        ['1:0', 1],
        ['2:0', 1],
      ],
    ]);
    expect(result!.planned).toBe(0);
  });

  it('§6.118 resume with T=0,1 cached and T=2 new: aggregation receives T=0,1,2', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    writeLines(f.output, [successLine({ t: 1 }), successLine({ t: 0 })]);
    const { error } = await plain(f, rs, { resume: true });
    expect(error).toBeNull();
    expect(sentKeys(rs)).toEqual(['2:0']);
    expect(aggregated(rs)).toEqual([
      [
        ['0:0', 1],
        ['1:0', 1],
        ['2:0', 0.5],
      ],
    ]);
  });
});
