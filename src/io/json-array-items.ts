/**
 * The elements of a JSON array held in a file, found in bounded memory: the byte span of each
 * element (one streaming pass, brackets and strings only, as json-file-members.ts does for an
 * object's members). An aggregate metrics file (§1.7) is such an array, one entry per agent, each
 * with a `group_level_metrics` of one entry per task: hundreds of MB at 10^6 rows, so whoever
 * needs an entry's few small members reads them from these spans instead of parsing the file.
 */
import { open } from 'node:fs/promises';
import { BACKSLASH, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';
import { chunks, type ByteSpan } from './json-file-members.js';

function fail(at: number, what: string): never {
  throw new SyntaxError(`${what} at byte ${at}`);
}

/** The streaming pass of `jsonFileArrayItems`, fed a chunk at a time. */
class ItemSpans {
  readonly items: ByteSpan[] = [];
  private depth = 0;
  private inString = false;
  private escape = false;
  private done = false;
  /** Where the element being read started (-1: between elements). */
  private start = -1;

  feed(buf: Buffer, n: number, pos: number): void {
    for (let i = 0; i < n; i++) {
      const c = buf[i];
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === BACKSLASH) this.escape = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      this.step(c, pos + i);
    }
  }

  /** Throws unless the array ended (`end`: the byte after the data). */
  finish(end: number): void {
    if (!this.done) fail(end, this.inString ? 'unterminated string' : 'unexpected end of data');
  }

  private step(c: number, at: number): void {
    const white = isJsonWhitespace(c);
    if (this.done) return white ? undefined : fail(at, 'unexpected data after the JSON value');
    if (this.depth === 0) {
      if (white) return;
      if (c !== LBRACKET) fail(at, 'not a JSON array');
      this.depth = 1;
      return;
    }
    if (this.depth === 1 && (white || c === COMMA || c === RBRACKET)) {
      // Between elements, or the end of a scalar one.
      if (this.start >= 0) this.end(at);
      if (c === RBRACKET) {
        this.depth = 0;
        this.done = true;
      }
      return;
    }
    if (this.depth === 1 && this.start < 0) this.start = at;
    if (c === QUOTE) this.inString = true;
    else if (c === LBRACE || c === LBRACKET) this.depth++;
    else if (c === RBRACE || c === RBRACKET) {
      if (--this.depth === 1) this.end(at + 1);
    }
  }

  private end(at: number): void {
    this.items.push({ start: this.start, end: at });
    this.start = -1;
  }
}

/**
 * The byte spans of the elements of the JSON array in `path`, in order. Checks only that the file
 * is one array whose strings close and whose brackets balance (a `SyntaxError` names the byte where
 * it breaks); an element's bytes are parsed by whoever reads them.
 */
export async function jsonFileArrayItems(path: string): Promise<ByteSpan[]> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const scan = new ItemSpans();
    for await (const { buf, n, pos } of chunks(fh, { start: 0, end: size })) scan.feed(buf, n, pos);
    scan.finish(size);
    return scan.items;
  } finally {
    await fh.close();
  }
}
