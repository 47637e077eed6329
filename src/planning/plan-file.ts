import { open, type FileHandle } from 'node:fs/promises';

/**
 * The plan: one fixed-size record per row to verify, in source order. It holds where each row's
 * source line and materialized input line are (byte offsets), the checksums of their bytes (so a
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
  /** `lineSum` of the source line's bytes, or `UNCHECKED` (a plan written before checksums). */
  sourceSum: number;
  /** `lineSum` of the materialized input line's bytes, or `UNCHECKED`. */
  inputSum: number;
  /**
   * ATIF plans only: the byte length and `lineSum` of the whole trajectory file the source line (a
   * manifest entry) names, so a batch proves it reads the trajectory that was planned.
   */
  trajectoryLength?: number;
  trajectorySum?: number;
}

/**
 * The checksum of a record read from a plan written before checksums existed: nothing to check.
 * (A row whose CRC-32 happens to be this value goes unchecked too: one row in 2^32.)
 */
export const UNCHECKED = 0xffffffff;

export const PLAN_RECORD_BYTES = 40;
/** Records of ATIF plans: today's layout plus the trajectory's length (f64) and checksum (u32). */
export const ATIF_PLAN_RECORD_BYTES = 52;
/**
 * Records of plans written before checksums (the first 32 bytes of today's layout). A run in
 * flight when its workers were upgraded still has such a plan; its `PlanSummary` has no
 * `recordBytes`, and its reads are not proven.
 */
export const LEGACY_PLAN_RECORD_BYTES = 32;

export function encodePlanRecord(r: PlanRecord, buf: Buffer, at: number): void {
  buf.writeDoubleLE(r.sourceOffset, at);
  buf.writeUInt32LE(r.sourceLength, at + 8);
  buf.writeUInt32LE(r.sourceLine, at + 12);
  buf.writeDoubleLE(r.inputOffset, at + 16);
  buf.writeUInt32LE(r.inputLength, at + 24);
  buf.writeUInt16LE(r.agent, at + 28);
  buf.writeUInt16LE(r.server, at + 30);
  buf.writeUInt32LE(r.sourceSum, at + 32);
  buf.writeUInt32LE(r.inputSum, at + 36);
  if (r.trajectoryLength !== undefined) {
    buf.writeDoubleLE(r.trajectoryLength, at + 40);
    buf.writeUInt32LE(r.trajectorySum ?? UNCHECKED, at + 48);
  }
}

export function decodePlanRecord(buf: Buffer, at: number, recordBytes = PLAN_RECORD_BYTES): PlanRecord {
  const checked = recordBytes >= PLAN_RECORD_BYTES;
  return {
    sourceOffset: buf.readDoubleLE(at),
    sourceLength: buf.readUInt32LE(at + 8),
    sourceLine: buf.readUInt32LE(at + 12),
    inputOffset: buf.readDoubleLE(at + 16),
    inputLength: buf.readUInt32LE(at + 24),
    agent: buf.readUInt16LE(at + 28),
    server: buf.readUInt16LE(at + 30),
    sourceSum: checked ? buf.readUInt32LE(at + 32) : UNCHECKED,
    inputSum: checked ? buf.readUInt32LE(at + 36) : UNCHECKED,
    ...(recordBytes >= ATIF_PLAN_RECORD_BYTES
      ? { trajectoryLength: buf.readDoubleLE(at + 40), trajectorySum: buf.readUInt32LE(at + 48) }
      : {}),
  };
}

/** Appends records to a plan file through a buffer (the plan of 10^6 rows is 32 MB on disk). */
export class PlanWriter {
  private readonly buf: Buffer;
  private used = 0;
  count = 0;

  private constructor(
    private readonly fh: FileHandle,
    private readonly recordBytes: number,
  ) {
    this.buf = Buffer.alloc(recordBytes * 4096);
  }

  /** A writer of `recordBytes` records (`ATIF_PLAN_RECORD_BYTES` for ATIF plans). */
  static async create(path: string, recordBytes = PLAN_RECORD_BYTES): Promise<PlanWriter> {
    return new PlanWriter(await open(path, 'w'), recordBytes);
  }

  async add(r: PlanRecord): Promise<void> {
    encodePlanRecord(r, this.buf, this.used);
    this.used += this.recordBytes;
    this.count++;
    if (this.used === this.buf.length) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.used > 0) await this.fh.write(this.buf, 0, this.used);
    this.used = 0;
  }

  /** Flushes, fsyncs and closes. */
  async close(): Promise<void> {
    await this.flush();
    await this.fh.sync();
    await this.fh.close();
  }
}

/** Reads records [from, to) of a plan file (`recordBytes`: a legacy plan's record size). */
export async function readPlanRange(path: string, from: number, to: number, recordBytes = PLAN_RECORD_BYTES): Promise<PlanRecord[]> {
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
  recordBytes = PLAN_RECORD_BYTES,
): Promise<T> {
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
