/**
 * A full disk names the file that could not be written. `/dev/full` is a real full device on Linux:
 * every write to it fails with ENOSPC.
 */
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { commitParts } from '../../src/io/committer.js';
import { writeFully } from '../../src/io/write-fully.js';
import { DiskWriteError } from '../../src/io/write-errors.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-write-errors-');

const FIX = 'free space, then run the same command again (a live run retries by itself)';

describe.skipIf(!existsSync('/dev/full'))('ENOSPC names the path', () => {
  it('writeFully through a handle: the path its caller opened (here a symlink to the full device)', async () => {
    const path = join(freshDir(), 'part.jsonl');
    symlinkSync('/dev/full', path);
    const fh = await open(path, 'w');
    try {
      const err = await writeFully(fh, Buffer.from('{"row":1}\n'), null, path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DiskWriteError);
      expect((err as Error).message).toBe(`cannot write '${path}': no space left on device (ENOSPC); ${FIX}`);
    } finally {
      await fh.close();
    }
  });

  it('commitParts: the output as the run names it (here a symlink to the full device)', async () => {
    const d = freshDir();
    const part = join(d, 'b0.part');
    writeFileSync(part, '{"row":1}\n');
    const output = join(d, 'out.jsonl');
    symlinkSync('/dev/full', output);
    const err = await commitParts(output, 0, [part]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiskWriteError);
    expect((err as Error).message).toBe(`cannot write '${output}': no space left on device (ENOSPC); ${FIX}`);
    // A command that stops on it (`reverify aggregate`) prints that line as is.
    expect(describeFailure(err)).toEqual({ line: `Error: ${(err as Error).message}`, code: 2 });
  });
});
