/**
 * A batch's rows read a window at a time (activities/verify-batch/row-windows.ts): every row is
 * the planned bytes, at most the window in use and the one after it are held, and a changed row
 * stops the batch when its window is read, naming the file and line.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPlannedRows } from '../../activities/verify-batch/planned-rows.js';
import { RowWindows } from '../../activities/verify-batch/row-windows.js';
import type { VerifyBatchRequest } from '../../activities/verify-batch/request.js';
import { lineDigest } from '../../src/io/line-digest.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';
import { tempDir } from '../helpers/temporal-env.js';

function fixture(rows: number) {
  const dir = tempDir('row-windows');
  const sourceLines = Array.from({ length: rows }, (_, t) =>
    JSON.stringify({ _ng_task_index: t, _ng_rollout_index: 0, response: 'r'.repeat(t % 7) }),
  );
  const inputLines = Array.from({ length: rows }, (_, t) => JSON.stringify({ _ng_task_index: t, agent_ref: { name: 'a' } }));
  const sourcePath = join(dir, 'rollouts.jsonl');
  const inputsPath = join(dir, 'inputs.jsonl');
  writeFileSync(sourcePath, sourceLines.map((l) => `${l}\n`).join(''));
  writeFileSync(inputsPath, inputLines.map((l) => `${l}\n`).join(''));
  const records: PlanRecord[] = [];
  let so = 0;
  let io = 0;
  for (let t = 0; t < rows; t++) {
    const s = Buffer.from(sourceLines[t]);
    const i = Buffer.from(inputLines[t]);
    records.push({
      sourceOffset: so,
      sourceLength: s.length,
      sourceLine: t + 1,
      inputOffset: io,
      inputLength: i.length,
      agent: 0,
      server: 0,
      sourceDigest: lineDigest(s),
      inputDigest: lineDigest(i),
    });
    so += s.length + 1;
    io += i.length + 1;
  }
  const req = { plan: { sourcePath, files: undefined }, inputsPath } as unknown as Pick<VerifyBatchRequest, 'plan' | 'inputsPath'>;
  return { req, records, sourceLines, inputLines, sourcePath, inputsPath };
}

describe('RowWindows', () => {
  it('cuts windows at a number of rows or of bytes, whichever comes first, never below one row', async () => {
    const f = fixture(12);
    const todo = f.records.map((_, i) => i);
    const sizes = f.records.map((r) => r.sourceLength + r.inputLength);
    const budget = sizes[0] + sizes[1] + sizes[2];
    const windows = new RowWindows(f.req, f.records, todo, { rows: 5, bytes: budget });
    const starts = windows.windowStarts();
    starts.forEach((start, w) => {
      const end = starts[w + 1] ?? todo.length;
      const bytes = sizes.slice(start, end).reduce((a, b) => a + b, 0);
      expect(end - start).toBeLessThanOrEqual(5);
      expect(end - start === 1 || bytes <= budget).toBe(true);
      // Cut no earlier than needed: the next row would have gone over a limit.
      if (end < todo.length) expect(end - start === 5 || bytes + sizes[end] > budget).toBe(true);
    });
    expect(starts.length).toBeGreaterThan(12 / 5);
    expect(new RowWindows(f.req, f.records, todo, { rows: 5, bytes: 1 }).windowStarts()).toEqual(todo);
    for (let k = 0; k < todo.length; k++) expect((await windows.row(k)).source()).toBe(f.sourceLines[k]);
    expect(windows.held()).toBe(0);
  });

  it('gives every row to send as planned, holding at most two windows', async () => {
    const f = fixture(23);
    const todo = [0, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 22]; // some rows done before
    const windows = new RowWindows(f.req, f.records, todo, { rows: 4, bytes: Infinity });
    for (let k = 0; k < todo.length; k++) {
      const row = await windows.row(k);
      expect(row.source()).toBe(f.sourceLines[todo[k]]);
      expect(row.input()).toBe(f.inputLines[todo[k]]);
      expect(windows.held()).toBeLessThanOrEqual(2);
    }
    expect(windows.held()).toBe(0);
  });

  it('rows taken out of order within the lanes still come out right', async () => {
    const f = fixture(12);
    const todo = f.records.map((_, i) => i);
    const windows = new RowWindows(f.req, f.records, todo, { rows: 5, bytes: Infinity });
    const order = [1, 0, 3, 2, 4, 6, 5, 7, 9, 8, 11, 10];
    const rows = await Promise.all(order.map((k) => windows.row(k)));
    rows.forEach((row, n) => expect(row.source()).toBe(f.sourceLines[order[n]]));
    expect(windows.held()).toBe(0);
  });

  it('a row changed after planning stops the batch when its window is read, naming the file and line', async () => {
    const f = fixture(10);
    const todo = f.records.map((_, i) => i);
    const windows = new RowWindows(f.req, f.records, todo, { rows: 4, bytes: Infinity });
    // Window 0 is read, and window 1 ahead of it, before the change.
    for (let k = 0; k < 4; k++) expect((await windows.row(k)).source()).toBe(f.sourceLines[k]);
    // Line 9 (window 2, read ahead when window 1 is first used) rewritten with bytes of the same length.
    const changed = [...f.sourceLines];
    changed[8] = changed[8].replace('"_ng_rollout_index":0', '"_ng_rollout_index":9');
    writeFileSync(f.sourcePath, changed.map((l) => `${l}\n`).join(''));
    for (let k = 4; k < 8; k++) expect((await windows.row(k)).source()).toBe(f.sourceLines[k]);
    await expect(windows.row(8)).rejects.toThrow(/rollouts\.jsonl.*line 9/);
  });

  it('reads a first window of `firstRows` (the lanes) and starts reading it before any row is asked for', async () => {
    const f = fixture(12);
    const todo = f.records.map((_, i) => i);
    const windows = new RowWindows(f.req, f.records, todo, { rows: 5, bytes: Infinity, firstRows: 2 });
    expect(windows.windowStarts()).toEqual([0, 2, 7]);
    expect(new RowWindows(f.req, f.records, todo, { rows: 5, bytes: Infinity, firstRows: 9 }).windowStarts()).toEqual([0, 5, 10]);
    expect(windows.held()).toBe(0);
    windows.readAhead();
    expect(windows.held()).toBe(1);
    for (let k = 0; k < todo.length; k++) expect((await windows.row(k)).input()).toBe(f.inputLines[k]);
    await windows.close();
  });

  it('reads ahead the windows of the rows the lanes take next (readRows), never again a window already taken', async () => {
    const f = fixture(20);
    const todo = f.records.map((_, i) => i);
    const windows = new RowWindows(f.req, f.records, todo, { rows: 4, bytes: Infinity });
    windows.readRows(0, 9);
    expect(windows.held()).toBe(3); // windows 0, 1 and 2: rows 0..8
    for (let k = 0; k < 4; k++) expect((await windows.row(k)).source()).toBe(f.sourceLines[k]);
    expect(windows.held()).toBe(2); // window 0 taken and dropped
    windows.readRows(0, 16); // from an older cursor: window 0 is not read again
    expect(windows.held()).toBe(3);
    windows.readRows(19, 10); // past the end: only the last window
    expect(windows.held()).toBe(4);
    for (let k = 4; k < todo.length; k++) expect((await windows.row(k)).input()).toBe(f.inputLines[k]);
    expect(windows.held()).toBe(0);
    await windows.close();
  });

  it('holds both files open from the first window to close(): later windows read the files it opened', async () => {
    const f = fixture(12);
    const todo = f.records.map((_, i) => i);
    const windows = new RowWindows(f.req, f.records, todo, { rows: 4, bytes: Infinity });
    expect((await windows.row(0)).source()).toBe(f.sourceLines[0]);
    // Gone from the directory: a window that opened the files again would fail.
    rmSync(f.sourcePath);
    rmSync(f.inputsPath);
    for (let k = 1; k < todo.length; k++) {
      const row = await windows.row(k);
      expect([row.source(), row.input()]).toEqual([f.sourceLines[k], f.inputLines[k]]);
    }
    await windows.close();
    await expect(new RowWindows(f.req, f.records, todo).row(0)).rejects.toThrow(/ENOENT/);
  });

  it('reads the source and the input at once; when both changed, the source is named', async () => {
    const f = fixture(4);
    const change = (path: string, lines: string[]) =>
      writeFileSync(
        path,
        lines
          .map(
            (l, i) => `${i === 2 ? l.replace('"_ng_task_index":2', '"_ng_task_index":7') : l}
`,
          )
          .join(''),
      );
    change(f.inputsPath, f.inputLines);
    await expect(readPlannedRows(f.req, f.records, [2])).rejects.toThrow(/materialized input of .*rollouts\.jsonl:3/);
    change(f.sourcePath, f.sourceLines);
    await expect(readPlannedRows(f.req, f.records, [2])).rejects.toThrow(/rollouts\.jsonl.*line 3/);
  });
});
