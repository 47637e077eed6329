/** A 20-digit index in --inputs or --rollouts is reported with its exact digits (JSON.parse would round it). */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { plain } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('big-index-messages');
const server = closedAfterEach(startScriptedServer);

describe('indices beyond 2^53 in messages', () => {
  it.each(['rollouts', 'inputs'] as const)('a 20-digit _ng_task_index in --%s: its exact digits, file:line, exit 1', async (which) => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 7]) });
    const file = which === 'rollouts' ? f.rollouts : f.inputs;
    writeFileSync(file, readFileSync(file, 'utf8').replace('"_ng_task_index":7,', '"_ng_task_index":12345678901234567891,'));
    const { error } = await plain(f, rs);
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`${file}:2: "_ng_task_index" is 12345678901234567891, beyond the exact integer range`);
    expect(rs.verifyBodies).toHaveLength(0);
  });
});
