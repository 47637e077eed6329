import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { lineKeyId } from '../src/contract/row-key.js';
import { publishFile } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { readOutputKeys } from '../src/io/output-cache.js';
import { readRangeBytes } from '../src/io/read-range.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface SeedRequest {
  rolloutsPath: string;
  output: string;
  workDir: string;
}

/**
 * Recovery mode, seeding (spec §4.6.3): the successful rows of --rollouts whose key the output does
 * not hold yet, copied byte for byte (a missing final `\n` added; keyless lines always copied;
 * duplicates inside --rollouts copied once), into a part file that the workflow then commits like a
 * batch — so a crash while seeding never leaves half a row or a row twice in the output.
 */
export function seedSuccesses() {
  return (req: SeedRequest): Promise<{ part: string; seeded: number }> =>
    failFastOnUserError(() => whileHeartbeating(async () => {
      const present = await readOutputKeys(req.output, { repairTruncated: true });
      const part = join(req.workDir, 'seed.main.part');
      const partial = `${part}.partial`;
      const out = await open(partial, 'w');
      const source = await open(req.rolloutsPath, 'r');
      let seeded = 0;
      try {
        for await (const line of jsonlLines(req.rolloutsPath)) {
          if (isBlank(line.text)) continue;
          const id = lineKeyId(line.text);
          if (id !== null) {
            if (present.has(id)) continue;
            present.add(id);
          }
          await out.write(Buffer.concat([await readRangeBytes(source, line.offset, line.rawLength), Buffer.from('\n')]));
          seeded++;
        }
      } finally {
        await source.close();
        await out.close();
      }
      await publishFile(partial, part);
      return { part, seeded };
    }));
}
