import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sameStamp, stampChanges } from '../../src/contract/file-stamp.js';
import { fileNow } from '../../src/io/file-identity.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-file-stamp-');

describe('file stamps: whatever a write changes', () => {
  it('the same bytes written in place: another stamp; when only the status-change time tells, said as a write in place', async () => {
    const path = join(tmp.freshDir(), 'rollouts.jsonl');
    writeFileSync(path, '{"a":1}\n');
    const planned = (await fileNow(path))!;
    expect(sameStamp(planned, await fileNow(path))).toBe(true);
    writeFileSync(path, readFileSync(path));
    const now = (await fileNow(path))!;
    expect(now.size).toBe(planned.size);
    expect(sameStamp(planned, now)).toBe(false);
    // The modification time put back (as `touch -r` or a copy keeping times would): the status change remains.
    expect(stampChanges({ ...now, ctimeNs: planned.ctimeNs }, now)).toEqual([
      expect.stringMatching(/^written to in place at \d{4}-\d\d-\d\dT[\d:]+\.\d{9}Z$/),
    ]);
  });

  it('a file replaced by another of the same size (renamed over it): another inode', async () => {
    const dir = tmp.freshDir();
    const [path, other] = [join(dir, 'a.jsonl'), join(dir, 'b.jsonl')];
    writeFileSync(path, '{"a":1}\n');
    writeFileSync(other, '{"a":2}\n');
    const planned = (await fileNow(path))!;
    renameSync(other, path);
    const now = (await fileNow(path))!;
    expect(now.size).toBe(planned.size);
    expect(sameStamp(planned, now)).toBe(false);
    expect(stampChanges(planned, now)).toContain(`replaced: inode ${planned.dev}:${planned.ino} -> ${now.dev}:${now.ino}`);
  });

  it('a stamp of another version (size and modification time only) is never the same', async () => {
    const path = join(tmp.freshDir(), 'a.jsonl');
    writeFileSync(path, 'x\n');
    const now = (await fileNow(path))!;
    expect(sameStamp({ size: now.size }, now)).toBe(false);
  });
});
