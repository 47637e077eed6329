import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { InputChangedError } from '../src/contract/errors.js';
import { inputChanged } from '../src/contract/input-changed.js';
import { lineKeyId } from '../src/contract/row-key.js';
import type { FileIdentity } from '../src/contract/run-spec.js';
import { publishFile } from '../src/io/atomic-file.js';
import { ExternalSorter } from '../src/io/external-sort.js';
import { sameStamp } from '../src/contract/file-stamp.js';
import { fileNow } from '../src/io/file-identity.js';
import { pathIdentity, sameFile } from '../src/io/same-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../src/planning/keyed-records.js';
import { decode, encode, Kind } from '../src/planning/key-facts.js';
import { outputKeyIds } from '../src/planning/output-cache.js';
import { readRangesFrom, type ByteRange } from '../src/io/read-ranges.js';
import { withScratchDir } from '../src/io/scratch-dir.js';
import { writeFully } from '../src/io/write-fully.js';
import { withRunLock } from '../src/io/run-lock.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface SeedRequest {
  rolloutsPath: string;
  output: string;
  workDir: string;
  /**
   * --rollouts as the plan read it (its keys decided what is re-verified): seeding refuses a file
   * changed since, or while it copies. Absent in runs started before it was passed.
   */
  planned?: FileIdentity;
}

/** Tuning of the seeding sorts (tests force them to spill to disk). */
export interface SeedOptions {
  /** Records an external sort holds in memory before it writes a run file. */
  maxRecords?: number;
}

/** A line to copy (a `Rollouts` fact with its place), sorted back into file order by its line number. */
type CopyRecord = KeyedRecord;

const COPY_BUFFER_BYTES = 1 << 20;

/**
 * The --rollouts lines to copy, into `copies`: keyless non-blank lines always; of each key the
 * first line, unless the output holds the key. A key join in flat memory: the output's keys and
 * the keyed lines are sorted by key, so each key's records arrive together, output first.
 */
async function chooseLines(req: SeedRequest, dir: string, opts: SeedOptions, copies: ExternalSorter<CopyRecord>): Promise<void> {
  const keys = new ExternalSorter<KeyedRecord>({
    dir,
    name: 'seed-keys',
    compare: compareKeyedRecords,
    codec: keyedRecordCodec,
    maxRecords: opts.maxRecords,
  });
  try {
    for await (const id of outputKeyIds(req.output, { repairTruncated: true }))
      await keys.add({ key: id, nums: encode.output(), text: null });
    for await (const line of jsonlLines(req.rolloutsPath)) {
      if (isBlank(line.text)) continue;
      const id = lineKeyId(line.text);
      const nums = encode.rollouts({ line: line.lineNo, offset: line.offset, rawLength: line.rawLength });
      if (id === null) await copies.add({ key: '', nums, text: null });
      else await keys.add({ key: id, nums, text: null });
    }
    let previous: string | null = null;
    for await (const r of keys.sorted()) {
      const firstOfKey = r.key !== previous;
      previous = r.key;
      if (firstOfKey && r.nums[0] === Kind.Rollouts) await copies.add({ key: '', nums: r.nums, text: null });
    }
  } finally {
    await keys.dispose();
  }
}

/** Lines read together: at most this many, and at most `COPY_READ_BYTES` of them (one line alone may be more). */
const COPY_READ_LINES = 8192;
const COPY_READ_BYTES = 8 << 20;

/**
 * Copies the chosen lines of `source` (at `sourcePath`), in file order, each ended by `\n`; returns
 * how many. Lines are read a few thousand at a time (adjacent ones in one read: `readRangesFrom`):
 * a read of its own per line made seeding 10^6 rows take a minute.
 */
async function copyLines(
  source: FileHandle,
  sourcePath: string,
  out: FileHandle,
  outPath: string,
  copies: ExternalSorter<CopyRecord>,
): Promise<number> {
  const buf = Buffer.allocUnsafe(COPY_BUFFER_BYTES);
  let used = 0;
  let copied = 0;
  const flush = async () => {
    await writeFully(out, buf.subarray(0, used), null, outPath);
    used = 0;
  };
  const copy = async (places: ByteRange[]) => {
    for (const line of await readRangesFrom(source, sourcePath, places)) {
      if (used + line.length + 1 > buf.length) await flush();
      if (line.length + 1 > buf.length) {
        await writeFully(out, Buffer.concat([line, Buffer.from('\n')]), null, outPath);
      } else {
        line.copy(buf, used);
        buf[used + line.length] = 0x0a;
        used += line.length + 1;
      }
      copied++;
    }
  };
  let places: ByteRange[] = [];
  let bytes = 0;
  for await (const r of copies.sorted()) {
    const { offset, rawLength: length } = decode.copy(r.nums);
    places.push({ offset, length });
    bytes += length;
    if (places.length < COPY_READ_LINES && bytes < COPY_READ_BYTES) continue;
    await copy(places);
    places = [];
    bytes = 0;
  }
  await copy(places);
  await flush();
  return copied;
}

/**
 * Stops seeding when --rollouts is not the file the plan read (`InputChangedError`). Not when it is
 * the output itself (`--append` into the run's own rollouts): opening the outputs may have repaired it.
 */
async function refuseChanged(req: SeedRequest): Promise<void> {
  if (!req.planned || sameFile(await pathIdentity(req.rolloutsPath), await pathIdentity(req.output))) return;
  const now = await fileNow(req.rolloutsPath);
  if (!sameStamp(req.planned, now)) {
    throw new InputChangedError(inputChanged(req.rolloutsPath, 'the successful rollouts to copy', req.planned, now));
  }
}

/**
 * Writes the seeding part file `part` (see `seedSuccesses`) and returns how many lines it holds.
 * Memory is flat in the number of rows: the key join and the copy order are external sorts whose
 * run files go to a scratch directory in `req.workDir`.
 */
export async function writeSeedPart(req: SeedRequest, part: string, opts: SeedOptions = {}): Promise<number> {
  return withScratchDir(req.workDir, 'seed-', async (dir) => {
    const copies = new ExternalSorter<CopyRecord>({
      dir,
      name: 'seed-lines',
      compare: compareKeyedRecords,
      codec: keyedRecordCodec,
      maxRecords: opts.maxRecords,
    });
    try {
      await refuseChanged(req);
      await chooseLines(req, dir, opts, copies);
      const partial = `${part}.partial`;
      const out = await open(partial, 'w');
      const source = await open(req.rolloutsPath, 'r');
      let seeded: number;
      try {
        seeded = await copyLines(source, req.rolloutsPath, out, partial, copies);
      } finally {
        await source.close();
        await out.close();
      }
      await refuseChanged(req);
      await publishFile(partial, part);
      return seeded;
    } finally {
      await copies.dispose();
    }
  });
}

/**
 * Recovery mode, seeding (spec §4.6.3): the successful rows of --rollouts whose key the output does
 * not hold yet, copied byte for byte (a missing final `\n` added; keyless lines always copied;
 * duplicates inside --rollouts copied once), into a part file that the workflow then commits like a
 * batch — so a crash while seeding never leaves half a row or a row twice in the output.
 */
export function seedSuccesses(req: SeedRequest): Promise<{ part: string; seeded: number }> {
  return failFastOnUserError(() =>
    whileHeartbeating(() =>
      withRunLock(req.output, async () => {
        const part = join(req.workDir, 'seed.main.part');
        return { part, seeded: await writeSeedPart(req, part) };
      }),
    ),
  );
}
