/**
 * A copy of one JSON value held in a file (a span `jsonFileMembers` found) re-indented the way
 * `JSON.stringify(value, null, 2)` lays it out, in bounded memory: `/aggregate_metrics` replies are
 * copied this way into `<out>_aggregate_metrics.json` instead of being parsed. Values are copied
 * byte for byte inside strings and scalars (the server's `1.0` stays `1.0`); only whitespace
 * between tokens changes, and a non-finite number becomes `null` (`scalarToken`).
 */
import { open } from 'node:fs/promises';
import { BACKSLASH, COLON, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';
import { MAX_NON_FINITE_TOKEN, scalarToken } from '../contract/json-non-finite.js';
import { chunks, type ByteSpan } from './json-file-members.js';
import type { OutputBuffer } from './output-buffer.js';

const COLON_SPACE = Buffer.from(': ');

/** A byte of a scalar token outside strings (a number, `true`, `NaN`…): not whitespace, structure or a quote. */
function isScalarByte(c: number): boolean {
  return (
    !isJsonWhitespace(c) && c !== QUOTE && c !== LBRACE && c !== LBRACKET && c !== RBRACE && c !== RBRACKET && c !== COMMA && c !== COLON
  );
}

/** The re-indenting copy, fed a chunk at a time. */
class IndentedCopy {
  private inString = false;
  private escape = false;
  /** The bracket just opened, until the next token says whether it is empty. */
  private pendingOpen = 0;
  /** A line break and the indentation of depth d, encoded once per depth (one per `,` otherwise). */
  private readonly breaks: Buffer[] = [];
  /** A scalar token is held until it ends, so that a non-finite number is written `null`. */
  private token = '';
  /** Longer than any non-finite token (or not ASCII): its bytes are copied as they come. */
  private copying = false;

  constructor(
    private depth: number,
    private readonly out: OutputBuffer,
  ) {}

  feed(buf: Buffer, n: number): void {
    for (let i = 0; i < n; i++) {
      if (this.inString) i = this.stringRun(buf, i, n);
      else this.byte(buf[i]);
    }
  }

  /** Ends a scalar the value ended on. */
  finish(): void {
    this.endToken();
  }

  /** Copies the run of string bytes from `i` up to the closing quote (or the chunk's end) in one piece; the index of its last byte. */
  private stringRun(buf: Buffer, i: number, n: number): number {
    let j = i;
    while (j < n) {
      const d = buf[j];
      if (this.escape) this.escape = false;
      else if (d === BACKSLASH) this.escape = true;
      else if (d === QUOTE) {
        this.inString = false;
        break;
      }
      j++;
    }
    this.out.bytes(buf, i, Math.min(j + 1, n));
    return j;
  }

  private byte(c: number): void {
    if (isJsonWhitespace(c)) return this.endToken();
    if (this.pendingOpen !== 0) {
      const closes = (this.pendingOpen === LBRACE && c === RBRACE) || (this.pendingOpen === LBRACKET && c === RBRACKET);
      this.pendingOpen = 0;
      if (closes) return this.out.byte(c);
      this.depth++;
      this.newline();
    }
    if (isScalarByte(c)) return this.scalarByte(c);
    this.endToken();
    if (c === LBRACE || c === LBRACKET) {
      this.out.byte(c);
      this.pendingOpen = c;
    } else if (c === RBRACE || c === RBRACKET) {
      this.depth--;
      this.newline();
      this.out.byte(c);
    } else if (c === COMMA) {
      this.out.byte(c);
      this.newline();
    } else if (c === COLON) {
      this.out.bytes(COLON_SPACE, 0, 2);
    } else {
      if (c === QUOTE) this.inString = true;
      this.out.byte(c);
    }
  }

  private scalarByte(c: number): void {
    if (!this.copying && c < 0x80 && this.token.length < MAX_NON_FINITE_TOKEN) {
      this.token += String.fromCharCode(c);
      return;
    }
    if (this.token) this.out.text(this.token);
    this.token = '';
    this.copying = true;
    this.out.byte(c);
  }

  private endToken(): void {
    if (this.token) this.out.text(scalarToken(this.token));
    this.token = '';
    this.copying = false;
  }

  private newline(): void {
    const b = (this.breaks[this.depth] ??= Buffer.from('\n' + '  '.repeat(this.depth)));
    this.out.bytes(b, 0, b.length);
  }
}

/**
 * Copies the JSON value at `span` of `path` to `out`, laid out as `JSON.stringify(value, null, 2)`
 * would lay it out when the value starts on a line indented `depth` levels (two spaces each):
 * members and elements one per line, `": "` after names, `{}` and `[]` when empty.
 */
export async function copyJsonIndented(path: string, span: ByteSpan, depth: number, out: OutputBuffer): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const copy = new IndentedCopy(depth, out);
    for await (const { buf, n } of chunks(fh, span)) {
      copy.feed(buf, n);
      await out.drain();
    }
    copy.finish();
    await out.drain();
  } finally {
    await fh.close();
  }
}
