/**
 * A JSON object held in a file, handled in bounded memory: where each top-level member's value
 * sits (byte ranges, found by one streaming pass), and a copy of one value re-indented the way
 * `JSON.stringify(value, null, 2)` lays it out. `/aggregate_metrics` replies carry one
 * `group_level_metrics` entry per task (hundreds of MB at 10^6 rows), so they go to disk and are
 * copied from there into `<out>_aggregate_metrics.json` instead of being parsed.
 *
 * Values are copied byte for byte inside strings and scalars (the server's `1.0` stays `1.0`);
 * only whitespace between tokens changes.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { BACKSLASH, COLON, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';
import { writeFully } from './write-fully.js';
import { MAX_NON_FINITE_TOKEN, scalarToken } from '../contract/json-non-finite.js';

/** Bytes `[start, end)` of a file. */
export interface ByteSpan {
  start: number;
  end: number;
}

const CHUNK = 1 << 20;
const COLON_SPACE = Buffer.from(': ');
/** Top-level keys longer than this are not kept (no reply we read has them). */
const MAX_KEY_BYTES = 4096;

/** The bytes of `span` of a file, a chunk at a time (the buffer is reused: use it before the next). */
async function* chunks(fh: FileHandle, span: ByteSpan): AsyncGenerator<{ buf: Buffer; n: number; pos: number }> {
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let pos = span.start; pos < span.end;) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, span.end - pos), pos);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${pos}`);
    yield { buf, n: bytesRead, pos };
    pos += bytesRead;
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
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const members = new Map<string, ByteSpan>();
    const stack: number[] = [];
    let inString = false;
    let escape = false;
    let done = false;
    // At depth 1: what comes next, the key being read, and where the current value started.
    let expect: 'key' | 'colon' | 'value' | 'comma' = 'key';
    let key: number[] = [];
    let valueStart = -1;
    let keyText = '';
    const fail = (at: number, what: string): never => {
      throw new SyntaxError(`${what} at byte ${at}`);
    };
    const endValue = (at: number): void => {
      members.set(keyText, { start: valueStart, end: at });
      valueStart = -1;
      expect = 'comma';
    };
    const step = (c: number, at: number): void => {
      if (inString) {
        if (stack.length === 1 && expect === 'colon' && key.length <= MAX_KEY_BYTES) key.push(c);
        if (escape) escape = false;
        else if (c === BACKSLASH) escape = true;
        else if (c === QUOTE) {
          inString = false;
          if (stack.length === 1 && expect === 'colon') keyText = JSON.parse(Buffer.from([QUOTE, ...key]).toString('utf8')) as string;
          else if (stack.length === 1 && valueStart >= 0) endValue(at + 1);
        }
        return;
      }
      if (isJsonWhitespace(c)) {
        if (stack.length === 1 && valueStart >= 0 && expect === 'value') endValue(at);
        return;
      }
      if (done) fail(at, 'unexpected data after the JSON value');
      if (stack.length === 0) {
        if (c !== LBRACE) fail(at, 'not a JSON object');
        stack.push(c);
        return;
      }
      if (stack.length === 1) {
        // A scalar value ends at the first byte that cannot belong to it.
        if (expect === 'value' && valueStart >= 0 && (c === COMMA || c === RBRACE)) endValue(at);
        if (expect === 'key') {
          if (c === QUOTE) {
            inString = true;
            key = [];
            expect = 'colon';
            return;
          }
          if (c === RBRACE && members.size === 0) {
            stack.pop();
            done = true;
            return;
          }
          fail(at, 'expected a member name');
        }
        if (expect === 'colon') {
          if (c !== COLON) fail(at, "expected ':'");
          expect = 'value';
          return;
        }
        if (expect === 'comma') {
          if (c === COMMA) expect = 'key';
          else if (c === RBRACE) {
            stack.pop();
            done = true;
          } else fail(at, "expected ',' or '}'");
          return;
        }
        // expect === 'value'
        if (valueStart < 0) {
          if (c === RBRACE || c === RBRACKET || c === COMMA || c === COLON) fail(at, 'expected a value');
          valueStart = at;
          if (c === QUOTE) inString = true;
          else if (c === LBRACE || c === LBRACKET) stack.push(c);
          return;
        }
        return; // inside a scalar
      }
      // Nested: strings and brackets only.
      if (c === QUOTE) inString = true;
      else if (c === LBRACE || c === LBRACKET) stack.push(c);
      else if (c === RBRACE || c === RBRACKET) {
        const open = stack.pop();
        if ((open === LBRACE) !== (c === RBRACE)) fail(at, 'mismatched bracket');
        if (stack.length === 1) endValue(at + 1);
      }
    };
    for await (const { buf, n, pos } of chunks(fh, { start: 0, end: size })) {
      for (let i = 0; i < n; i++) {
        if (inString && stack.length > 1) {
          // Inside a nested string (most of the bytes) only its end matters: no call per byte.
          const c = buf[i];
          if (escape) escape = false;
          else if (c === BACKSLASH) escape = true;
          else if (c === QUOTE) inString = false;
          continue;
        }
        step(buf[i], pos + i);
      }
    }
    if (!done) fail(size, inString ? 'unterminated string' : 'unexpected end of data');
    return members;
  } finally {
    await fh.close();
  }
}

/** Output collected synchronously in a growing buffer, written to a file when asked. */
export class OutputBuffer {
  private buf = Buffer.allocUnsafe(CHUNK);
  private used = 0;

  /** `path`: the file's name in a write error. */
  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
  ) {}

  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  byte(c: number): void {
    if (this.used === this.buf.length) this.room(1);
    this.buf[this.used++] = c;
  }

  bytes(b: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.used += b.copy(this.buf, this.used, start, end);
  }

  text(s: string): void {
    this.room(Buffer.byteLength(s));
    this.used += this.buf.write(s, this.used);
  }

  /** Writes what was collected (call it often: memory holds everything until then). */
  async drain(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
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
    let inString = false;
    let escape = false;
    let pendingOpen = 0;
    // A line break and the indentation of depth d, encoded once per depth (one per `,` otherwise).
    const breaks: Buffer[] = [];
    const newline = (d: number): void => {
      const b = (breaks[d] ??= Buffer.from('\n' + '  '.repeat(d)));
      out.bytes(b, 0, b.length);
    };
    // A scalar token is held until it ends, so that a non-finite number is written `null` (`scalarToken`).
    // Longer than any non-finite token (or not ASCII): its bytes are copied as they come.
    let token = '';
    let copying = false;
    const endToken = (): void => {
      if (token) out.text(scalarToken(token));
      token = '';
      copying = false;
    };
    for await (const { buf, n } of chunks(fh, span)) {
      for (let i = 0; i < n; i++) {
        const c = buf[i];
        if (inString) {
          // Copy the run of string bytes up to the next quote or backslash in one piece.
          let j = i;
          while (j < n) {
            const d = buf[j];
            if (escape) escape = false;
            else if (d === BACKSLASH) escape = true;
            else if (d === QUOTE) {
              inString = false;
              break;
            }
            j++;
          }
          out.bytes(buf, i, Math.min(j + 1, n));
          i = j;
          continue;
        }
        if (isJsonWhitespace(c)) {
          endToken();
          continue;
        }
        if (pendingOpen !== 0) {
          const closes = (pendingOpen === LBRACE && c === RBRACE) || (pendingOpen === LBRACKET && c === RBRACKET);
          pendingOpen = 0;
          if (closes) {
            out.byte(c);
            continue;
          }
          depth++;
          newline(depth);
        }
        if (isScalarByte(c)) {
          if (!copying && c < 0x80 && token.length < MAX_NON_FINITE_TOKEN) token += String.fromCharCode(c);
          else {
            if (token) out.text(token);
            token = '';
            copying = true;
            out.byte(c);
          }
          continue;
        }
        endToken();
        if (c === LBRACE || c === LBRACKET) {
          out.byte(c);
          pendingOpen = c;
        } else if (c === RBRACE || c === RBRACKET) {
          depth--;
          newline(depth);
          out.byte(c);
        } else if (c === COMMA) {
          out.byte(c);
          newline(depth);
        } else if (c === COLON) {
          out.bytes(COLON_SPACE, 0, 2);
        } else {
          if (c === QUOTE) inString = true;
          out.byte(c);
        }
      }
      await out.drain();
    }
    endToken();
    await out.drain();
  } finally {
    await fh.close();
  }
}

/** A byte of a scalar token outside strings (a number, `true`, `NaN`…): not whitespace, structure or a quote. */
function isScalarByte(c: number): boolean {
  return (
    !isJsonWhitespace(c) && c !== QUOTE && c !== LBRACE && c !== LBRACKET && c !== RBRACE && c !== RBRACKET && c !== COMMA && c !== COLON
  );
}
