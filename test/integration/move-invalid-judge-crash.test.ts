/**
 * The recovery-mode move of rows flagged `invalid_judge_response` out of --rollouts into its
 * sidecar, killed (SIGKILL, in a child process) at every step: the pair on disk is then the old
 * one, the new one, or the new sidecar with the old --rollouts (which the next move completes), and
 * after the next move no row is lost and none doubled.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MOVE_STEPS, moveFlaggedRows, type MoveStep } from '../../activities/move-invalid-judge-rows.js';
import { failureLine, successLine } from '../helpers/spec-fixtures.js';
import { projectRoot } from '../helpers/worker-process.js';
import { tempDir } from '../helpers/temporal-env.js';

const child = join(projectRoot, 'test', 'helpers', 'move-child.ts');

/** A flagged row as older NeMo Gym builds stored it: a scored row with `invalid_judge_response`. */
const flagged = (t: number, extra = '') =>
  successLine({ t }, '0.0').replace('"reward":0.0', `"reward":0.0,"invalid_judge_response":true${extra}`);

/** --rollouts with 40 rows, 12 of them flagged (one stamped terminal, one with a cached deliverable), and its sidecar. */
function fixture(dir: string): { rollouts: string; sidecar: string; rows: string[]; old: { rollouts: string; sidecar: string } } {
  mkdirSync(dir, { recursive: true });
  const deliverables = join(dir, 'deliverables-7');
  mkdirSync(deliverables);
  writeFileSync(join(deliverables, 'report.docx'), 'x');
  const rows = Array.from({ length: 40 }, (_, t) => {
    if (t % 10 === 7) return flagged(t, `,"deliverables_dir":${JSON.stringify(deliverables)}`);
    if (t === 3) return flagged(t, ',"_ng_failure_terminal":true');
    return t % 3 === 0 ? flagged(t) : successLine({ t });
  });
  const rollouts = join(dir, 'rollouts.jsonl');
  const sidecar = join(dir, 'rollouts_failures.jsonl');
  writeFileSync(rollouts, rows.slice(0, 20).join('\n') + '\n\n' + rows.slice(20).join('\n') + '\n');
  // The sidecar's last row has no newline: the moved rows must not be glued onto it.
  writeFileSync(sidecar, [failureLine({ t: 100 }), failureLine({ t: 101 })].join('\n'));
  return { rollouts, sidecar, rows, old: { rollouts: readFileSync(rollouts, 'utf8'), sidecar: readFileSync(sidecar, 'utf8') } };
}

const flaggedCount = (rows: string[]) => rows.filter((r) => r.includes('invalid_judge_response')).length;

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** Runs the move in a child process that SIGKILLs itself at `step`; resolves with how it ended. */
async function killedAt(rollouts: string, step: MoveStep): Promise<string | null> {
  const run = promisify(execFile)(process.execPath, ['--import', 'tsx', child, rollouts, step], { cwd: projectRoot });
  return run.then(
    () => null,
    (err: { signal?: string }) => err.signal ?? 'failed',
  );
}

describe('moving invalid-judge rows out of --rollouts, killed at every step', () => {
  it('an undisturbed move: the flagged rows leave --rollouts for the sidecar, once, marked; moving again changes nothing', async () => {
    const f = fixture(tempDir());
    const n = flaggedCount(f.rows);
    expect(n).toBe(17);
    expect(await moveFlaggedRows(f.rollouts)).toEqual({ flagged: n, moved: n });
    const kept = f.rows.filter((r) => !r.includes('invalid_judge_response'));
    expect(readFileSync(f.rollouts, 'utf8')).toBe(kept.map((r) => r + '\n').join(''));
    const side = lines(readFileSync(f.sidecar, 'utf8'));
    expect(side.slice(0, 2)).toEqual(lines(f.old.sidecar));
    const moved = side.slice(2).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(moved.map((r) => r._ng_task_index)).toEqual(f.rows.flatMap((r, t) => (r.includes('invalid_judge_response') ? [t] : [])));
    for (const r of moved) {
      expect(r).toMatchObject({
        _ng_failure_class: 'judge_invalid',
        _ng_migrated_invalid_judge_response: true,
        invalid_judge_response: true,
      });
      expect(r).not.toHaveProperty('_ng_failure_terminal');
      expect(r.reuse_cached_deliverable).toBe((r._ng_task_index as number) % 10 === 7 ? true : undefined);
    }
    const after = { rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.sidecar, 'utf8') };
    expect(await moveFlaggedRows(f.rollouts)).toEqual({ flagged: 0, moved: 0 });
    expect({ rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.sidecar, 'utf8') }).toEqual(after);
  });

  it.each(MOVE_STEPS.map((s) => [s]))(
    'killed at %s: old pair, new pair, or new sidecar with old --rollouts; the next move ends at the new pair',
    { timeout: 60_000 },
    async (step) => {
      const root = tempDir();
      const calm = fixture(join(root, 'calm'));
      await moveFlaggedRows(calm.rollouts);
      const fresh = { rollouts: readFileSync(calm.rollouts, 'utf8'), sidecar: readFileSync(calm.sidecar, 'utf8') };

      const f = fixture(join(root, 'killed'));
      // The same paths' contents in both fixtures, but for the directory name in deliverables_dir.
      const same = (text: string) => text.replaceAll(join(root, 'calm'), join(root, 'killed'));
      expect(await killedAt(f.rollouts, step)).toBe('SIGKILL');
      const now = { rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.sidecar, 'utf8') };
      const expected: Record<MoveStep, { rollouts: string; sidecar: string }> = {
        scanned: f.old,
        'row-moved': f.old,
        'temps-written': f.old,
        'sidecar-replaced': { rollouts: f.old.rollouts, sidecar: same(fresh.sidecar) },
        'rollouts-replaced': { rollouts: same(fresh.rollouts), sidecar: same(fresh.sidecar) },
      };
      expect(now).toEqual(expected[step]);
      // No row is lost at any moment: every row of the old --rollouts is in one of the files.
      for (const [t, row] of f.rows.entries()) {
        const inRollouts = lines(now.rollouts).includes(row);
        const inSidecar = lines(now.sidecar).some((l) => (JSON.parse(l) as { _ng_task_index: number })._ng_task_index === t);
        expect(inRollouts || inSidecar).toBe(true);
      }

      // The next move completes it: exactly the undisturbed result, each row once, no temp file left.
      const again = await moveFlaggedRows(f.rollouts);
      expect({ rollouts: readFileSync(f.rollouts, 'utf8'), sidecar: readFileSync(f.sidecar, 'utf8') }).toEqual({
        rollouts: same(fresh.rollouts),
        sidecar: same(fresh.sidecar),
      });
      expect(again.moved).toBe(step === 'sidecar-replaced' || step === 'rollouts-replaced' ? 0 : flaggedCount(f.rows));
      const keys = [...lines(readFileSync(f.rollouts, 'utf8')), ...lines(readFileSync(f.sidecar, 'utf8')).slice(2)].map(
        (l) => (JSON.parse(l) as { _ng_task_index: number })._ng_task_index,
      );
      expect(keys.sort((a, b) => a - b)).toEqual(f.rows.map((_, t) => t));
      expect(readdirSync(join(root, 'killed')).filter((n) => n.includes('.tmp'))).toEqual([]);
    },
  );
});
