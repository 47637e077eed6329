/**
 * `reverify omit`'s append to the sidecar after a crash at each point: exactly one copy of the
 * omission rows, or none, never half of them; another writer's rows are never cut.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { omittingPaths } from '../../src/contract/file-names.js';
import { appendOmissions, finishOmission } from '../../src/io/omission-append.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-omission-append-');

const BEFORE = '{"_ng_task_index":1,"_ng_rollout_index":0,"_ng_failure_class":"judge_failed"}\n';
const ROWS =
  '{"_ng_task_index":2,"_ng_rollout_index":0,"_ng_omitted":true,"_ng_failure_message":"é"}\n' +
  '{"_ng_task_index":3,"_ng_rollout_index":0,"_ng_omitted":true,"_ng_failure_message":"é"}\n';

/** An output whose sidecar holds `BEFORE` then `tail`, as a crashed `omit` with its journal written left it. */
function crashed(tail: string, journal: 'rows' | 'both' = 'both') {
  const d = freshDir();
  const output = join(d, 'out.jsonl');
  const sidecar = join(d, 'out_failures.jsonl');
  writeFileSync(sidecar, BEFORE + tail);
  const j = omittingPaths(output);
  writeFileSync(j.rows, ROWS);
  if (journal === 'both') writeFileSync(j.header, JSON.stringify({ sidecar_length: Buffer.byteLength(BEFORE) }) + '\n');
  return { output, sidecar, j };
}

describe('omission append', () => {
  it('appends once and leaves no journal', async () => {
    const { output, sidecar, j } = crashed('');
    await appendOmissions(output, sidecar, ROWS);
    expect(readFileSync(sidecar, 'utf8')).toBe(BEFORE + ROWS);
    expect([existsSync(j.rows), existsSync(j.header)]).toEqual([false, false]);
  });

  it.each([
    ['nothing appended', ''],
    ['half a row appended', ROWS.slice(0, 30)],
    ['one row and a half appended', ROWS.slice(0, ROWS.indexOf('\n') + 20)],
    ['every row appended, journal not yet removed', ROWS],
  ])('a crash with %s: finished with exactly one copy', async (_, tail) => {
    const { output, sidecar, j } = crashed(tail);
    expect(await finishOmission(output, sidecar)).toEqual(['["2","0"]', '["3","0"]']);
    expect(readFileSync(sidecar, 'utf8')).toBe(BEFORE + ROWS);
    expect([existsSync(j.rows), existsSync(j.header)]).toEqual([false, false]);
    // Finishing again does nothing.
    expect(await finishOmission(output, sidecar)).toEqual([]);
    expect(readFileSync(sidecar, 'utf8')).toBe(BEFORE + ROWS);
  });

  it('a crash before the header was written: nothing appended, the rows file removed', async () => {
    const { output, sidecar, j } = crashed('', 'rows');
    expect(await finishOmission(output, sidecar)).toEqual([]);
    expect(readFileSync(sidecar, 'utf8')).toBe(BEFORE);
    expect(existsSync(j.rows)).toBe(false);
  });

  it("another writer's rows past the recorded length are never cut: the omission is given up", async () => {
    const other = '{"_ng_task_index":4,"_ng_rollout_index":0,"_ng_failure_class":"judge_failed"}\n';
    const { output, sidecar, j } = crashed(other);
    expect(await finishOmission(output, sidecar)).toBeNull();
    expect(readFileSync(sidecar, 'utf8')).toBe(BEFORE + other);
    expect(existsSync(j.header)).toBe(false);
  });
});
