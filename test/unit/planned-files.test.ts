import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputChangedError } from '../../src/contract/errors.js';
import { fileNow } from '../../src/io/file-identity.js';
import { PlannedFiles } from '../../activities/verify-batch/planned-rows.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-planned-files-');

/** A plan over one file (`path`), with the stamp it has now. */
async function planOf(path: string) {
  const stamp = (await fileNow(path))!;
  return { planPath: '', sourcePath: path, agents: [], servers: [], recordBytes: 48, files: [{ path, ...stamp }] };
}

describe('PlannedFiles proves a file by its stamp when it opens it', () => {
  it('a file appended to since the plan is refused before a byte is read; not the run’s own sidecar, which its commits append to', async () => {
    const path = join(tmp.freshDir(), 'rollouts_failures.jsonl');
    writeFileSync(path, '{"a":1}\n');
    const plan = await planOf(path);
    appendFileSync(path, '{"a":2}\n');
    const err = await new PlannedFiles(plan).read(path, [{ offset: 0, length: 7 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputChangedError);
    expect((err as Error).message).toContain(`'${path}' changed after this run planned it (size 8 -> 16 bytes`);
    const own = new PlannedFiles(plan, path);
    expect((await own.read(path, [{ offset: 0, length: 7 }]))[0].toString()).toBe('{"a":1}');
    await own.close();
  });
});
