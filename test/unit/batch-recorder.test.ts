/**
 * A batch's recorder: a group of rows that write nothing, and rows recorded while a write fails,
 * end as they should, and `flush` never waits forever (a drain that had no write to wait for ended
 * before it was recorded as running, and `flush` spun on it at 100 % CPU: a CI run hung on a batch
 * of no-persist results).
 */
import { readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchRecorder } from '../../activities/verify-batch/batch-recorder.js';
import { emptyCounts, selectForNextRound, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-batch-recorder-');
const fresh = (): Checkpoint => ({ done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} });
const count = (c: Checkpoint['counts']) => void c.main++;

describe('BatchRecorder', () => {
  it('writes, counts and marks done the rows recorded, one line each', async () => {
    const dir = tmp.freshDir();
    const r = await BatchRecorder.open(join(dir, 'main.part'), join(dir, 'side.part'), fresh());
    r.record(0, 'main', '{"a":1}', count);
    r.record(1, 'sidecar', '{"b":2}', count);
    r.record(2, null, null, count);
    await r.flush();
    expect(r.checkpoint.done.sort()).toEqual([0, 1, 2]);
    expect(r.checkpoint.counts.main).toBe(3);
    await r.close();
    expect(readFileSync(join(dir, 'main.part'), 'utf8')).toBe('{"a":1}\n');
    expect(readFileSync(join(dir, 'side.part'), 'utf8')).toBe('{"b":2}\n');
  });

  it("a snapshot (the heartbeat's checkpoint) copies the rows selected for the next round and what each left, not the live lists", async () => {
    const dir = tmp.freshDir();
    const r = await BatchRecorder.open(join(dir, 'main.part'), join(dir, 'side.part'), fresh());
    r.record(0, null, null, (_c, cp) => selectForNextRound(cp, 10, 'none'));
    r.record(1, 'sidecar', '{"b":2}', (_c, cp) => selectForNextRound(cp, 11, 'terminal'));
    r.record(2, 'sidecar', '{"b":3}', (_c, cp) => selectForNextRound(cp, 12, 'row'));
    await r.flush();
    const snap = r.snapshot();
    expect([snap.judgeFailedRows, snap.withdrawnRows, snap.terminalRows]).toEqual([[10, 11, 12], [10], [11]]);
    r.record(3, null, null, (_c, cp) => selectForNextRound(cp, 13, 'none'));
    await r.flush();
    expect([snap.judgeFailedRows, snap.withdrawnRows]).toEqual([[10, 11, 12], [10]]);
    await r.close();
  });

  it('a group of rows that write no line (no-persist results) is counted, and flush returns', { timeout: 5_000 }, async () => {
    const dir = tmp.freshDir();
    const r = await BatchRecorder.open(join(dir, 'main.part'), join(dir, 'side.part'), fresh());
    r.record(0, null, null, count);
    r.record(1, null, null, count);
    await r.flush();
    expect(r.checkpoint.done.sort()).toEqual([0, 1]);
    r.record(2, 'main', '{"a":1}', count);
    await r.flush();
    expect(r.checkpoint.done.sort()).toEqual([0, 1, 2]);
    await r.close();
    expect(readFileSync(join(dir, 'main.part'), 'utf8')).toBe('{"a":1}\n');
  });

  it('after a failed write, every flush throws it (rows recorded meanwhile included), none waits forever', { timeout: 5_000 }, async () => {
    const dir = tmp.freshDir();
    const r = await BatchRecorder.open(join(dir, 'main.part'), join(dir, 'side.part'), fresh());
    // The next write to the main part fails (EBADF), as a full disk would.
    await (r as unknown as { main: FileHandle }).main.close();
    r.record(0, 'main', '{"a":1}', count);
    const first = r.flush();
    r.record(1, 'main', '{"b":2}', count); // arrives while the failing write is in flight
    await expect(first).rejects.toThrow();
    await expect(r.flush()).rejects.toThrow();
    expect(r.checkpoint.done).toEqual([]);
    expect(() => r.record(2, 'main', '{"c":3}', count)).toThrow();
  });
});
