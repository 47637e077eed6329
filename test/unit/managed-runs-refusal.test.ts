/**
 * Where reverify refuses to write into a managed run (as NeMo Gym's main branch refuses it), the
 * refusal reads every row of the output and its sidecar, not only the first of each file, and
 * says in one line what to do (src/run-checks/managed-runs.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseManagedRuns, refuseRunTagged } from '../../src/run-checks/managed-runs.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-refusal-');
const row = (t: number, extra = '') => `{"_ng_task_index": ${t}, "_ng_rollout_index": 0${extra}}\n`;

describe('refuseRunTagged', () => {
  it('a tagged row after untagged ones, in the sidecar: refused naming file:line', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    writeFileSync(out, row(0) + row(1));
    writeFileSync(
      join(d, 'out_failures.jsonl'),
      row(2, ', "_ng_failure_class": "x"') + '\n' + row(3, ', "_ng_run_id": "r1", "_ng_failure_class": "x"'),
    );
    await expect(refuseRunTagged(out)).rejects.toThrow(
      `Run-tagged outcomes have lost their manifest. Restore it from backup or use a new output path. (${join(d, 'out_failures.jsonl')}:3 is stamped _ng_run_id and no manifest is beside it.)`,
    );
  });
  it('the key inside a nested value is not a tag', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    writeFileSync(out, row(0, ', "meta": {"_ng_run_id": "r1"}, "note": "_ng_run_id"'));
    await expect(refuseRunTagged(out)).resolves.toBeUndefined();
  });
});

describe('refuseManagedRuns', () => {
  it("--rollouts of a managed run: NeMo Gym's line, then how to make the projection reverify can run on", async () => {
    const d = freshDir();
    const rollouts = join(d, 'rollouts.jsonl');
    writeFileSync(rollouts, row(0));
    writeFileSync(join(d, 'rollouts_manifest.json'), '{}');
    const refusal = refuseManagedRuns(join(d, 'new.jsonl'), rollouts, false);
    await expect(refusal).rejects.toThrow(/^--rollouts belongs to a NeMo Gym managed run .*Saved artifacts were not changed\. /);
    await expect(refuseManagedRuns(join(d, 'new.jsonl'), rollouts, false)).rejects.toThrow(
      `(Make the projection with \`reverify read -o ${rollouts} --disposition success --skip-keys _ng_run_id > selected.jsonl\` and pass it as --rollouts.)`,
    );
  });
});
