/**
 * The thread behind `ScanAhead` (scan-ahead.ts): reads a JSONL file in the same reads as
 * `jsonlLineChunks` and, for its share of the reads (`lane` of `lanes`), scans every line for the wanted members
 * (`isVouchedObject`), digests the lines it vouches for (`lineDigest`, when asked) and posts the
 * results. It stays at most `ahead` reads in front of the reads the other side has taken. Pure
 * bytes in, numbers out: every decision about a line stays with the caller.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MemberNames } from '../contract/json-line-scan.js';
import { jsonlLineChunks } from './jsonl-lines.js';
import { lineDigestHalves } from './line-digest.js';
import { isVouchedObject } from './scanned-lines.js';
import type { ScanAheadRequest, ScannedRead } from './scan-ahead.js';

const req = workerData as ScanAheadRequest;
const port = parentPort!;
const names = new MemberNames(req.names);
const width = 2 * req.names.length;
let taken = 0;
let wake: (() => void) | null = null;
port.on('message', (n: number) => {
  taken = n;
  wake?.();
});

async function scanAll(): Promise<void> {
  let posted = 0;
  try {
    const slots = names.slots();
    let index = 0;
    for await (const chunk of jsonlLineChunks(req.path)) {
      // The other reads are the caller's or other threads'.
      if (index++ % req.lanes !== req.lane) continue;
      const { data, count } = chunk;
      const read: ScannedRead = {
        offset: chunk.offset,
        count,
        vouched: new Uint8Array(count),
        slots: new Int32Array(count * width),
        digests: new Uint32Array(req.digests ? 2 * count : 0),
      };
      for (let k = 0; k < count; k++) {
        const start = chunk.start[k];
        const end = chunk.end[k];
        if (!isVouchedObject(data, start, end, names, slots)) continue;
        read.vouched[k] = 1;
        read.slots.set(slots, k * width);
        if (req.digests) lineDigestHalves(data.subarray(start, end), read.digests, 2 * k);
      }
      port.postMessage(read, [read.vouched.buffer, read.slots.buffer, read.digests.buffer] as ArrayBuffer[]);
      posted++;
      while (posted - taken >= req.ahead) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    port.postMessage('end');
  } catch {
    // The caller reads the file itself and meets the same trouble there, with its own message.
    port.postMessage('failed');
  }
  port.close();
}

void scanAll();
