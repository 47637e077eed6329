import { open } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';
import { DIGEST_BYTES, readDigest, writeDigest, type LineDigest } from '../io/line-digest.js';
import { RecordFileWriter } from '../io/record-file-writer.js';

/**
 * The plan: one fixed-size record per row to verify, in source order. It holds where each row's
 * source line and materialized input line are (byte offsets), the digests of their bytes (so a
 * later read proves it got the planned row: DESIGN.md "Every read is proven"), and which agent
 * and resources server it belongs to (indexes into the plan's meta file). Fixed records make
 * batch `i` a byte range, so a batch activity on any worker reads exactly its rows and nothing else.
 */
export interface PlanRecord {
  sourceOffset: number;
  sourceLength: number;
  /** 1-based line number in the source file, for messages. */
  sourceLine: number;
  inputOffset: number;
  inputLength: number;
  agent: number;
  server: number;
  /** `lineDigest` of the source line's bytes. */
  sourceDigest: LineDigest;
  /** `lineDigest` of the materialized input line's bytes. */
  inputDigest: LineDigest;
  /**
   * ATIF plans only: the byte length and `lineDigest` of the whole trajectory file the source line
   * (a manifest entry) names, so a batch proves it reads the trajectory that was planned.
   */
  trajectoryLength?: number;
  trajectoryDigest?: LineDigest;
}

/** Records of NeMo Gym plans: places (32 bytes), then the source and input digests. */
export const PLAN_RECORD_BYTES = 32 + 2 * DIGEST_BYTES;
/** Records of ATIF plans: today's layout plus the trajectory's length (f64) and digest. */
export const ATIF_PLAN_RECORD_BYTES = PLAN_RECORD_BYTES + 8 + DIGEST_BYTES;

/**
 * Refuses a plan whose records are not of this version's layout (`recordBytes`): a run in flight
 * when its workers were upgraded has a plan written by another version (before digests: 32-, 40-
 * or 52-byte records), which these workers would misread. Re-planning it is the way on.
 */
export function checkPlanLayout(recordBytes: number | undefined): number {
  if (recordBytes === PLAN_RECORD_BYTES || recordBytes === ATIF_PLAN_RECORD_BYTES) return recordBytes;
  throw new ConfigError(
    `this run's plan was written by another version of reverify (${recordBytes ?? 32}-byte records, this version writes ` +
      `${PLAN_RECORD_BYTES} or ${ATIF_PLAN_RECORD_BYTES}): its rows cannot be proven. End it with \`reverify cancel -o <output>\`, ` +
      'then run the same command with --resume: it plans again from the files as they are now',
  );
}

export function encodePlanRecord(r: PlanRecord, buf: Buffer, at: number): void {
  buf.writeDoubleLE(r.sourceOffset, at);
  buf.writeUInt32LE(r.sourceLength, at + 8);
  buf.writeUInt32LE(r.sourceLine, at + 12);
  buf.writeDoubleLE(r.inputOffset, at + 16);
  buf.writeUInt32LE(r.inputLength, at + 24);
  buf.writeUInt16LE(r.agent, at + 28);
  buf.writeUInt16LE(r.server, at + 30);
  writeDigest(r.sourceDigest, buf, at + 32);
  writeDigest(r.inputDigest, buf, at + 40);
  if (r.trajectoryLength !== undefined) {
    buf.writeDoubleLE(r.trajectoryLength, at + 48);
    writeDigest(r.trajectoryDigest ?? 0n, buf, at + 56);
  }
}

/** The agent of the record `encodePlanRecord` wrote at `at`. */
export function encodedAgent(buf: Buffer, at: number): number {
  return buf.readUInt16LE(at + 28);
}

export function decodePlanRecord(buf: Buffer, at: number, recordBytes = PLAN_RECORD_BYTES): PlanRecord {
  return {
    sourceOffset: buf.readDoubleLE(at),
    sourceLength: buf.readUInt32LE(at + 8),
    sourceLine: buf.readUInt32LE(at + 12),
    inputOffset: buf.readDoubleLE(at + 16),
    inputLength: buf.readUInt32LE(at + 24),
    agent: buf.readUInt16LE(at + 28),
    server: buf.readUInt16LE(at + 30),
    sourceDigest: readDigest(buf, at + 32),
    inputDigest: readDigest(buf, at + 40),
    ...(recordBytes >= ATIF_PLAN_RECORD_BYTES
      ? { trajectoryLength: buf.readDoubleLE(at + 48), trajectoryDigest: readDigest(buf, at + 56) }
      : {}),
  };
}

/** Appends records to a plan file through a buffer (the plan of 10^6 rows is 48 MB on disk). */
export class PlanWriter {
  private constructor(private readonly out: RecordFileWriter) {}

  /** A writer of `recordBytes` records (`ATIF_PLAN_RECORD_BYTES` for ATIF plans). */
  static async create(path: string, recordBytes = PLAN_RECORD_BYTES): Promise<PlanWriter> {
    return new PlanWriter(await RecordFileWriter.create(path, recordBytes, 4096));
  }

  /** Records written. */
  get count(): number {
    return this.out.count;
  }

  async add(r: PlanRecord): Promise<void> {
    await this.out.add(r, encodePlanRecord);
  }

  /**
   * Appends the record `encodePlanRecord` wrote at `buf[at]` (of this writer's size), as is;
   * returns a promise only when the buffer was written out (await it).
   */
  addEncoded(buf: Buffer, at: number): Promise<void> | undefined {
    return this.out.addBytes(buf, at);
  }

  /** Flushes, fsyncs and closes. */
  close(): Promise<void> {
    return this.out.close();
  }
}

/** Reads records [from, to) of a plan file (`recordBytes`: the plan summary's; another version's is refused). */
export async function readPlanRange(path: string, from: number, to: number, recordBytes: number | undefined): Promise<PlanRecord[]> {
  recordBytes = checkPlanLayout(recordBytes);
  const fh = await open(path, 'r');
  try {
    const n = to - from;
    const buf = Buffer.allocUnsafe(n * recordBytes);
    const { bytesRead } = await fh.read(buf, 0, buf.length, from * recordBytes);
    if (bytesRead !== buf.length) throw new Error(`plan file ${path} is shorter than expected (records ${from}..${to})`);
    const out: PlanRecord[] = [];
    for (let i = 0; i < n; i++) out.push(decodePlanRecord(buf, i * recordBytes, recordBytes));
    return out;
  } finally {
    await fh.close();
  }
}

/** Reads single records of a plan file by index, through one open file. */
export async function withPlanReader<T>(
  path: string,
  body: (read: (i: number) => Promise<PlanRecord>) => Promise<T>,
  layout: number | undefined,
): Promise<T> {
  const recordBytes = checkPlanLayout(layout);
  const fh = await open(path, 'r');
  const buf = Buffer.allocUnsafe(recordBytes);
  try {
    return await body(async (i) => {
      const { bytesRead } = await fh.read(buf, 0, recordBytes, i * recordBytes);
      if (bytesRead !== recordBytes) throw new Error(`plan file ${path} has no record ${i}`);
      return decodePlanRecord(buf, 0, recordBytes);
    });
  } finally {
    await fh.close();
  }
}
