/**
 * The run store's `start_or_resume` identity check (docs/store-coverage.md row 93): a plain run
 * saves the digests of its --inputs and --rollouts in its coverage file; a `--resume` with another
 * file is refused in one line before anything is sent or written, unless `--allow-unsafe`; an
 * output without saved digests (NeMo Gym 0.7.0's, an earlier reverify's) resumes as before.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { successLine, tasks, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('resume-identity');
const server = closedAfterEach(startScriptedServer);

describe('--resume and the identity of the run inputs', () => {
  it('a changed --rollouts is refused (exit 1, nothing written); --allow-unsafe proceeds; an output without digests resumes', async () => {
    const s = await server({ verify: byTask({ 2: judgeFailed() }, reward(1.0)) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]) });
    const coverage = join(f.dir, 'out_coverage.json');
    const run = (extra: Record<string, unknown>) =>
      runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], rejudge: false, ...extra });
    const files = () => [f.output, f.outputSidecar, coverage].map((p) => readFileSync(p, 'utf8'));

    const first = await run({ maxAttempts: 3 });
    expect(first.error).toBeNull();
    const saved = (JSON.parse(readFileSync(coverage, 'utf8')) as { input_identity?: Record<string, string> }).input_identity;
    expect(saved).toEqual({ inputs: expect.stringMatching(/^[0-9a-f]{16}$/), rollouts: expect.stringMatching(/^[0-9a-f]{16}$/) });

    // The same files resume (task 2 is judged again), and the digests stay the same.
    const same = await run({ resume: true });
    expect(same.error).toBeNull();
    expect((JSON.parse(readFileSync(coverage, 'utf8')) as { input_identity?: unknown }).input_identity).toEqual(saved);

    // Task 3's saved answer is replaced: another --rollouts file under the same name.
    writeLines(
      f.rollouts,
      [0, 1, 2, 3].map((t) => successLine({ t }, t === 3 ? '0.5' : '1.0')),
    );
    const sent = s.verifyBodies.length;
    const before = files();
    const refused = await run({ resume: true });
    expect(refused.error).toEqual({
      code: 1,
      line: expect.stringMatching(
        new RegExp(
          `^Error: --resume: --rollouts '${f.rollouts}' is not the file this run was started with \\(its rows differ from the digest saved in '${coverage}'\\): ` +
            'resume with the original file, write to another --output, or pass --allow-unsafe to resume with this one$',
        ),
      ),
    });
    expect(files()).toEqual(before);
    expect(s.verifyBodies.length).toBe(sent);

    // --allow-unsafe: resumed, planned key by key against what the files hold; the new digests are saved.
    const unsafe = await run({ resume: true, allowUnsafe: true });
    expect(unsafe.error).toBeNull();
    expect(s.verifyBodies.length).toBe(sent + 1);
    const now = (JSON.parse(readFileSync(coverage, 'utf8')) as { input_identity: Record<string, string> }).input_identity;
    expect(now.inputs).toBe(saved!.inputs);
    expect(now.rollouts).not.toBe(saved!.rollouts);

    // An output without saved digests (NeMo Gym 0.7.0's, or an earlier reverify's) resumes as before.
    const old = JSON.parse(readFileSync(coverage, 'utf8')) as Record<string, unknown>;
    delete old.input_identity;
    writeFileSync(coverage, JSON.stringify(old, null, 2) + '\n');
    writeLines(
      f.rollouts,
      [0, 1, 2, 3].map((t) => successLine({ t }, t === 3 ? '0.25' : '1.0')),
    );
    const legacy = await run({ resume: true });
    expect(legacy.error).toBeNull();
  });
});
