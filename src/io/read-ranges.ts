import { open } from 'node:fs/promises';
import { readRangeBytes } from './read-range.js';

/** A byte range of a file. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** Ranges closer than this are read together (the gap is read and dropped). */
const MAX_GAP = 64 * 1024;
/** The most bytes one read covers. */
const MAX_WINDOW = 8 * 1024 * 1024;

/**
 * Reads many byte ranges of one file as UTF-8 texts, in the order given, with few reads: ranges
 * sorted by offset are coalesced into windows (a batch's rows sit next to each other in the source
 * file), and each window is read once. Memory: the texts plus one window.
 */
export async function readRanges(path: string, ranges: ByteRange[]): Promise<string[]> {
  const out = new Array<string>(ranges.length);
  const order = ranges.map((_, i) => i).sort((a, b) => ranges[a].offset - ranges[b].offset);
  const fh = await open(path, 'r');
  try {
    for (let i = 0; i < order.length; ) {
      const first = ranges[order[i]];
      let end = first.offset + first.length;
      let j = i + 1;
      while (j < order.length) {
        const r = ranges[order[j]];
        const newEnd = Math.max(end, r.offset + r.length);
        if (r.offset - end > MAX_GAP || newEnd - first.offset > MAX_WINDOW) break;
        end = newEnd;
        j++;
      }
      const window = await readRangeBytes(fh, first.offset, end - first.offset);
      for (let k = i; k < j; k++) {
        const r = ranges[order[k]];
        out[order[k]] = window.toString('utf8', r.offset - first.offset, r.offset - first.offset + r.length);
      }
      i = j;
    }
  } finally {
    await fh.close();
  }
  return out;
}
