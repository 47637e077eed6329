/**
 * The settlement of re-verified saved rows in the output (activities/settle-saved-rows.ts): rows
 * replaced in place, every other byte kept (a CRLF line, an unknown field); a retry after the
 * rename (the workflow still holds the old length) settles nothing twice and leaves the same file;
 * a temp file left by a kill before the rename is removed; a file another program changed is refused.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settleRows, settleTempPath } from '../../activities/settle-saved-rows.js';

const row = (t: number, extra = '') => `{"_ng_task_index":${t},"_ng_rollout_index":0,"reward":0,"response":"r${t}"${extra}}`;
const settled = (t: number) =>
  `{"_ng_task_index":${t},"_ng_rollout_index":0,"reward":1,"response":"r${t}","_ng_operation_id":"R/saved/${t}.0"}`;

function files() {
  const dir = mkdtempSync(join(tmpdir(), 'settle-'));
  const output = join(dir, 'out.jsonl');
  const text = `${row(0)}\n${row(1, ',"note":"x"')}\r\n${row(2)}\n`;
  writeFileSync(output, text);
  const part = join(dir, 'saved-b0.main.part');
  writeFileSync(part, `${settled(1)}\n${settled(2)}\n`);
  return { output, part, text };
}

describe('settleRows', () => {
  it('replaces the selected rows in place and copies every other byte', async () => {
    const f = files();
    const r = await settleRows({ output: f.output, mainLength: f.text.length, parts: [f.part] });
    const want = `${row(0)}\n${settled(1)}\n${settled(2)}\n`;
    expect(readFileSync(f.output, 'utf8')).toBe(want);
    expect(r).toEqual({ mainLength: Buffer.byteLength(want), settled: 2, already: 0 });
  });

  it('retried after its rename (the old length recorded): nothing settles twice, the file stays', async () => {
    const f = files();
    await settleRows({ output: f.output, mainLength: f.text.length, parts: [f.part] });
    const once = readFileSync(f.output, 'utf8');
    writeFileSync(settleTempPath(f.output), 'a stale temp file of a killed attempt');
    const again = await settleRows({ output: f.output, mainLength: f.text.length, parts: [f.part] });
    expect(again).toEqual({ mainLength: statSync(f.output).size, settled: 0, already: 2 });
    expect(readFileSync(f.output, 'utf8')).toBe(once);
    expect(existsSync(settleTempPath(f.output))).toBe(false);
  });

  it('refuses an output whose length is not the recorded one, and leaves it as it was', async () => {
    const f = files();
    await expect(settleRows({ output: f.output, mainLength: f.text.length - 1, parts: [f.part] })).rejects.toThrow(
      /out\.jsonl is \d+ bytes, not the \d+ this run recorded: another program changed it/,
    );
    expect(readFileSync(f.output, 'utf8')).toBe(f.text);
    expect(existsSync(settleTempPath(f.output))).toBe(false);
  });
});
