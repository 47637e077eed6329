/**
 * A JSON object held in a file, read in bounded memory: where each top-level member's value sits
 * (byte ranges, found by one streaming pass). `/aggregate_metrics` replies carry one
 * `group_level_metrics` entry per task (hundreds of MB at 10^6 rows), so they go to disk and are
 * read from there (json-indent-copy.ts copies a member out) instead of being parsed whole.
 *
 * Not the row scanner (src/contract/json-line-scan.ts) nor `JSON.parse`: both need the whole text
 * in memory, and the dependencies hold no streaming JSON reader. This pass checks only the
 * structure (brackets, strings); a member's bytes are parsed with `JSON.parse` by whoever needs it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { BACKSLASH, COLON, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';

/** Bytes `[start, end)` of a file. */
export interface ByteSpan {
  start: number;
  end: number;
}

const CHUNK = 1 << 20;
/** Top-level keys longer than this are not kept (no reply we read has them). */
const MAX_KEY_BYTES = 4096;

/** The bytes of `span` of a file, a chunk at a time (the buffer is reused: use it before the next). */
export async function* chunks(fh: FileHandle, span: ByteSpan): AsyncGenerator<{ buf: Buffer; n: number; pos: number }> {
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let pos = span.start; pos < span.end;) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, span.end - pos), pos);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${pos}`);
    yield { buf, n: bytesRead, pos };
    pos += bytesRead;
  }
}

export function fail(at: number, what: string): never {
  throw new SyntaxError(`${what} at byte ${at}`);
}

/** The streaming pass of `jsonFileMembers` (and of each object of `jsonFileArrayMembers`), fed a chunk at a time. */
export class MemberSpans {
  readonly members = new Map<string, ByteSpan>();
  private readonly stack: number[] = [];
  private inString = false;
  private escape = false;
  done = false;
  /** At depth 1: what comes next, the key being read, and where the current value started. */
  private expect: 'key' | 'colon' | 'value' | 'comma' = 'key';
  private key: number[] = [];
  private keyText = '';
  private valueStart = -1;

  /**
   * The bytes `[from, n)` of `buf`, whose byte 0 sits at byte `pos` of the file. With `stopAtEnd`,
   * stops after the object's closing brace and returns the index after it (else, and when the
   * object has not ended, `n`): a caller reading the object inside a larger value goes on from there.
   */
  feed(buf: Buffer, n: number, pos: number, from = 0, stopAtEnd = false): number {
    for (let i = from; i < n; i++) {
      if (this.inString && this.stack.length > 1) {
        // Inside a nested string (most of the bytes) only its end matters: no call per byte.
        const c = buf[i];
        if (this.escape) this.escape = false;
        else if (c === BACKSLASH) this.escape = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      this.step(buf[i], pos + i);
      if (stopAtEnd && this.done) return i + 1;
    }
    return n;
  }

  /** Throws unless the object ended (`size`: the file's). */
  finish(size: number): void {
    if (!this.done) fail(size, this.inString ? 'unterminated string' : 'unexpected end of data');
  }

  private step(c: number, at: number): void {
    if (this.inString) return this.stringByte(c, at);
    if (isJsonWhitespace(c)) {
      if (this.stack.length === 1 && this.valueStart >= 0 && this.expect === 'value') this.endValue(at);
      return;
    }
    if (this.done) fail(at, 'unexpected data after the JSON value');
    if (this.stack.length === 0) {
      if (c !== LBRACE) fail(at, 'not a JSON object');
      this.stack.push(c);
      return;
    }
    if (this.stack.length === 1) return this.topByte(c, at);
    // Nested: strings and brackets only.
    if (c === QUOTE) this.inString = true;
    else if (c === LBRACE || c === LBRACKET) this.stack.push(c);
    else if (c === RBRACE || c === RBRACKET) {
      const open = this.stack.pop();
      if ((open === LBRACE) !== (c === RBRACE)) fail(at, 'mismatched bracket');
      if (this.stack.length === 1) this.endValue(at + 1);
    }
  }

  private stringByte(c: number, at: number): void {
    const readingKey = this.stack.length === 1 && this.expect === 'colon';
    if (readingKey && this.key.length <= MAX_KEY_BYTES) this.key.push(c);
    if (this.escape) this.escape = false;
    else if (c === BACKSLASH) this.escape = true;
    else if (c === QUOTE) {
      this.inString = false;
      if (readingKey) this.keyText = JSON.parse(Buffer.from([QUOTE, ...this.key]).toString('utf8')) as string;
      else if (this.stack.length === 1 && this.valueStart >= 0) this.endValue(at + 1);
    }
  }

  /** A byte outside strings at depth 1 (between the object's members). */
  private topByte(c: number, at: number): void {
    // A scalar value ends at the first byte that cannot belong to it.
    if (this.expect === 'value' && this.valueStart >= 0 && (c === COMMA || c === RBRACE)) this.endValue(at);
    if (this.expect === 'key') {
      if (c === QUOTE) {
        this.inString = true;
        this.key = [];
        this.expect = 'colon';
      } else if (c === RBRACE && this.members.size === 0) this.close();
      else fail(at, 'expected a member name');
    } else if (this.expect === 'colon') {
      if (c !== COLON) fail(at, "expected ':'");
      this.expect = 'value';
    } else if (this.expect === 'comma') {
      if (c === COMMA) this.expect = 'key';
      else if (c === RBRACE) this.close();
      else fail(at, "expected ',' or '}'");
    } else if (this.valueStart < 0) {
      if (c === RBRACE || c === RBRACKET || c === COMMA || c === COLON) fail(at, 'expected a value');
      this.valueStart = at;
      if (c === QUOTE) this.inString = true;
      else if (c === LBRACE || c === LBRACKET) this.stack.push(c);
    } // else: inside a scalar
  }

  private close(): void {
    this.stack.pop();
    this.done = true;
  }

  private endValue(at: number): void {
    this.members.set(this.keyText, { start: this.valueStart, end: at });
    this.valueStart = -1;
    this.expect = 'comma';
  }
}

/**
 * The top-level members of the JSON object in `path`: key -> byte span of its value. Checks the
 * structure on the way (one object; brackets balanced and matched; strings closed; nothing after
 * it) and throws a `SyntaxError` naming the byte where it breaks. Scalars are not checked
 * character by character: parse a member's span to check it. A repeated key keeps its last value,
 * as `JSON.parse` does.
 */
export async function jsonFileMembers(path: string): Promise<Map<string, ByteSpan>> {
  return (await scanFile(path, new MemberSpans())).members;
}

/** Feeds the whole file at `path` to `scan`, a chunk at a time, and finishes it (throws where it breaks). */
export async function scanFile<S extends { feed(buf: Buffer, n: number, pos: number): void; finish(size: number): void }>(
  path: string,
  scan: S,
): Promise<S> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    for await (const { buf, n, pos } of chunks(fh, { start: 0, end: size })) scan.feed(buf, n, pos);
    scan.finish(size);
    return scan;
  } finally {
    await fh.close();
  }
}
