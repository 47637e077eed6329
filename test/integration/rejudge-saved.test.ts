/**
 * `--rejudge-saved` (the run store's re-verification of a selected saved result; issue 31 item 2)
 * end to end on a real Temporal dev server: the reference server's first grading of chosen rows is
 * an invalid verdict (reward 0, flagged); `--resume --rejudge-saved` judges those rows again from
 * their saved answers and settles each in place — grading replaced, a field the verifier does not
 * echo kept, the operation id added, every other row byte for byte, each key once. A verifier that
 * answers without a grade withdraws: nothing is written. The dry run lists the rows that would
 * settle and fails with one line for a key that cannot.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rejudgeSavedCheck } from '../../src/cli/rejudge-saved-check.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { readRows, runReverify as run, sampleRun, RS, useReferenceServer } from '../helpers/run-fixtures.js';
import { echo, emptyMetrics, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('rejudge-saved');
const rs = useReferenceServer({ port: 0, seed: 2, invalidJudge: ['0:0@1', '1:0@1', '3:1@1'] });
const scripted = closedAfterEach(startScriptedServer);

type Row = Record<string, unknown>;
const keyOf = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('--rejudge-saved', () => {
  it('settles the selected saved rows in place (grading replaced, other fields kept), withdraws an ungraded answer, and checks a dry run', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 6, repeats: 2 });
    const files = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], concurrency: 2 };
    expect((await run(files)).error).toBeNull();
    // A field no verifier echoes (a capture field, a user's note) on the rows to settle.
    const noted = readRows(d.output).map((r) => (['0:0', '1:0'].includes(keyOf(r)) ? { ...r, note: 'kept' } : r));
    writeFileSync(d.output, noted.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const before = lines(d.output);
    const flagged = readRows(d.output).filter((r) => r.invalid_judge_response === true);
    expect(flagged.map(keyOf).sort()).toEqual(['0:0', '1:0', '3:1']);

    // The dry run: which rows would settle; then one line for a key that cannot.
    const said: string[] = [];
    await rejudgeSavedCheck({ ...files, resume: true, rejudgeSaved: '0:0,1:0', dryRun: true }, (l) => said.push(l));
    const lineOf = (k: string) => before.findIndex((l) => keyOf(JSON.parse(l) as Row) === k) + 1;
    expect(said[0]).toMatch(new RegExp(`^Would settle .*out\\.jsonl:${lineOf('0:0')}: key 0:0 \\(reward 0 now\\), judged again by ${RS}`));
    expect(said.at(-1)).toBe('Dry run: 2 saved row(s) would be re-verified and settled; nothing was started or judged');
    await expect(rejudgeSavedCheck({ ...files, resume: true, rejudgeSaved: '0:0,99:0', dryRun: true }, () => {})).rejects.toThrow(
      /^--rejudge-saved: cannot settle key 99:0: .*out\.jsonl has no saved row of it$/,
    );
    expect(lines(d.output)).toEqual(before);

    // Settled: 0:0 and 1:0 judged again (their second grading is their true grade).
    // Two batches: both settled by one rewrite (the second's plan offsets point into the output as it was).
    const settled = await run({ ...files, batchSize: 1, resume: true, rejudgeSaved: '0:0,1:0' });
    expect(settled.error).toBeNull();
    const after = lines(d.output);
    expect(after).toHaveLength(before.length);
    expect(new Set(after.map((l) => keyOf(JSON.parse(l) as Row))).size).toBe(before.length);
    for (let i = 0; i < before.length; i++) {
      const old = JSON.parse(before[i]) as Row;
      if (!['0:0', '1:0'].includes(keyOf(old))) {
        expect(after[i]).toBe(before[i]);
        continue;
      }
      const row = JSON.parse(after[i]) as Row;
      expect(keyOf(row)).toBe(keyOf(old));
      expect(row.note).toBe('kept');
      expect(row.invalid_judge_response).toBeUndefined();
      expect(row.reward).toBe(row.extracted_answer === row.expected_answer ? 1 : 0);
      expect(row.response).toEqual(old.response);
      expect(String(row._ng_operation_id)).toMatch(new RegExp(`/saved/${keyOf(old).replace(':', '\\.')}$`));
    }
    expect(settled.result!.messages.join('\n')).toContain('Re-verified 2 saved row(s) from their saved answers: 2 settled');

    // Withdrawn: a verifier answering without a grade writes nothing; the saved row stays.
    const s = await scripted({ aggregate: emptyMetrics, verify: (row) => echo(row, {}) });
    const withdrawn = await run({ ...files, servers: [`${RS}=${s.url}`], resume: true, rejudgeSaved: '3:1' });
    expect(withdrawn.error).toBeNull();
    expect(lines(d.output)).toEqual(after);
    expect(withdrawn.result!.messages.join('\n')).toContain('0 settled (grading replaced), 1 withdrawn');
  });
});
