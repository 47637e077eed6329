/**
 * A plan made ahead by `reverify run` is taken over by the plan activity only for exactly the same
 * request on unchanged files, and then gives the same plan, summary and messages as planning in
 * place; in every other case the activity plans itself, and the plan made ahead leaves nothing behind.
 */
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPlansAhead, planAhead, plannedAhead, takePlanAhead } from '../../activities/plan-ahead.js';
import { planInto, type PlanRequest } from '../../activities/plan-run/plan-into.js';
import type { RoutingTable } from '../../src/config/routing.js';
import { inputLine, successLine } from '../helpers/spec-fixtures.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-plan-ahead-test-');
const routing: RoutingTable = { agents: { agent_a: 'rs_a' }, catchAll: null, servers: { rs_a: 'http://a' }, taskSources: [] };

function request(dir: string, over: Partial<PlanRequest> = {}): PlanRequest {
  const keys = Array.from({ length: 300 }, (_, t) => ({ t }));
  const inputs = join(dir, 'inputs.jsonl');
  const rollouts = join(dir, 'rollouts.jsonl');
  writeFileSync(inputs, keys.map((k) => inputLine(k)).join('\n') + '\n');
  // A repeated key: the plan's messages say so.
  writeFileSync(rollouts, [...keys, { t: 7 }].map((k) => successLine(k)).join('\n') + '\n');
  return {
    inputsPath: inputs,
    rolloutsPath: rollouts,
    workDir: join(dir, '.out.jsonl.reverify'),
    routing,
    limit: null,
    judgeFailedOnly: false,
    resume: false,
    outputs: { output: join(dir, 'out.jsonl'), sidecar: join(dir, 'out_failures.jsonl') },
    outputsCleared: false,
    maxAttempts: 3,
    repairTruncated: false,
    ...over,
  };
}

const aheadDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith('reverify-plan-ahead-')).length;

// Plans made ahead go to the system's temporary directory: this file's own one, so that other test
// files' runs (in parallel) do not change the count.
const systemTmp = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = tmp.freshDir();
});
afterAll(() => {
  if (systemTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = systemTmp;
});

describe('plan ahead', () => {
  it('is taken over for the same request: the same plan, summary and messages as planning in place', async () => {
    const dir = tmp.freshDir();
    const req = request(dir);
    const before = aheadDirs();
    planAhead(req);
    const taken = await takePlanAhead(JSON.parse(JSON.stringify(req)) as PlanRequest);
    expect(taken).not.toBeNull();
    const plannedHere = await planInto({ ...req, workDir: join(dir, 'here') });
    const inWorkDir = { planPath: join(req.workDir, 'plan.bin'), attemptsPath: join(req.workDir, 'plan.attempts.bin') };
    expect(taken).toEqual({ ...plannedHere, ...inWorkDir });
    expect(taken!.messages.join('\n')).toMatch(/repeats the key of line 8/);
    expect(readFileSync(taken!.planPath).equals(readFileSync(plannedHere.planPath))).toBe(true);
    expect(readFileSync(taken!.attemptsPath!).equals(readFileSync(plannedHere.attemptsPath!))).toBe(true);
    expect(readFileSync(taken!.attemptsPath!).length).toBe(4 * taken!.rows);
    const summary = JSON.parse(readFileSync(join(req.workDir, 'plan.json'), 'utf8')) as Record<string, unknown>;
    expect(summary).toEqual({ ...JSON.parse(readFileSync(join(dir, 'here', 'plan.json'), 'utf8')), ...inWorkDir });
    expect(readdirSync(req.workDir).sort()).toEqual(['plan.attempts.bin', 'plan.bin', 'plan.json']);
    expect(aheadDirs()).toBe(before);
    // Taken once: the next activity attempt plans itself.
    expect(await takePlanAhead(req)).toBeNull();
  });

  it('is not taken over for another request, nor after a file it read changed, nor when planning ahead failed', async () => {
    const before = aheadDirs();
    const dir = tmp.freshDir();
    const req = request(dir);
    planAhead(req);
    expect(await takePlanAhead({ ...req, limit: 5 })).toBeNull();

    planAhead(req);
    await plannedAhead(req.workDir);
    appendFileSync(req.rolloutsPath, successLine({ t: 5 }) + '\n');
    expect(await takePlanAhead(req)).toBeNull();

    appendFileSync(req.rolloutsPath, '{"not json\n');
    planAhead(req);
    expect(await takePlanAhead(req)).toBeNull();
    await expect(planInto(req)).rejects.toThrow(/rollouts\.jsonl:303: malformed JSON/);
    expect(aheadDirs()).toBe(before);
  });

  it('leaves nothing behind when no activity takes it', async () => {
    const before = aheadDirs();
    const dir = tmp.freshDir();
    planAhead(request(dir));
    await dropPlansAhead();
    expect(aheadDirs()).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(['inputs.jsonl', 'rollouts.jsonl']);
  });
});
