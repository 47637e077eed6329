import { open, type FileHandle } from 'node:fs/promises';

/**
 * The plan: one fixed-size record per row to verify, in source order. It holds where each row's
 * source line and materialized input line are (byte offsets), and which agent and resources server
 * it belongs to (indexes into the plan's meta file). Fixed records make batch `i` a byte range,
 * so a batch activity on any worker reads exactly its rows and nothing else.
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
}

export const PLAN_RECORD_BYTES = 32;

export function encodePlanRecord(r: PlanRecord, buf: Buffer, at: number): void {
  buf.writeDoubleLE(r.sourceOffset, at);
  buf.writeUInt32LE(r.sourceLength, at + 8);
  buf.writeUInt32LE(r.sourceLine, at + 12);
  buf.writeDoubleLE(r.inputOffset, at + 16);
  buf.writeUInt32LE(r.inputLength, at + 24);
  buf.writeUInt16LE(r.agent, at + 28);
  buf.writeUInt16LE(r.server, at + 30);
}

export function decodePlanRecord(buf: Buffer, at: number): PlanRecord {
  return {
    sourceOffset: buf.readDoubleLE(at),
    sourceLength: buf.readUInt32LE(at + 8),
    sourceLine: buf.readUInt32LE(at + 12),
    inputOffset: buf.readDoubleLE(at + 16),
    inputLength: buf.readUInt32LE(at + 24),
    agent: buf.readUInt16LE(at + 28),
    server: buf.readUInt16LE(at + 30),
  };
}

/** Appends records to a plan file through a buffer (the plan of 10^6 rows is 32 MB on disk). */
export class PlanWriter {
  private buf = Buffer.allocUnsafe(PLAN_RECORD_BYTES * 4096);
  private used = 0;
  count = 0;

  private constructor(private readonly fh: FileHandle) {}

  static async create(path: string): Promise<PlanWriter> {
    return new PlanWriter(await open(path, 'w'));
  }

  async add(r: PlanRecord): Promise<void> {
    encodePlanRecord(r, this.buf, this.used);
    this.used += PLAN_RECORD_BYTES;
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

/** Reads records [from, to) of a plan file. */
export async function readPlanRange(path: string, from: number, to: number): Promise<PlanRecord[]> {
  const fh = await open(path, 'r');
  try {
    const n = to - from;
    const buf = Buffer.allocUnsafe(n * PLAN_RECORD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, from * PLAN_RECORD_BYTES);
    if (bytesRead !== buf.length) throw new Error(`plan file ${path} is shorter than expected (records ${from}..${to})`);
    const out: PlanRecord[] = [];
    for (let i = 0; i < n; i++) out.push(decodePlanRecord(buf, i * PLAN_RECORD_BYTES));
    return out;
  } finally {
    await fh.close();
  }
}

/** Reads single records of a plan file by index, through one open file. */
export async function withPlanReader<T>(path: string, body: (read: (i: number) => Promise<PlanRecord>) => Promise<T>): Promise<T> {
  const fh = await open(path, 'r');
  const buf = Buffer.allocUnsafe(PLAN_RECORD_BYTES);
  try {
    return await body(async (i) => {
      const { bytesRead } = await fh.read(buf, 0, PLAN_RECORD_BYTES, i * PLAN_RECORD_BYTES);
      if (bytesRead !== PLAN_RECORD_BYTES) throw new Error(`plan file ${path} has no record ${i}`);
      return decodePlanRecord(buf, 0);
    });
  } finally {
    await fh.close();
  }
}
