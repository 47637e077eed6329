/**
 * JSON text as NeMo Gym 0.7.0 writes an exported row: read with `orjson.loads`, written with
 * `orjson.dumps`. Reading follows Python's dict (a repeated key keeps its first place and its last
 * value), integers within [-2^63, 2^64) stay integers (`-0` → `0`) and larger ones become floats;
 * writing is compact, strings escaped as orjson escapes them (as `JSON.stringify` does), floats in
 * ryu's shortest form (`1.0`, `100000.0`, `1e16`, `1.5e-7`, `0.00001`). Text orjson refuses (a lone
 * surrogate, a number beyond a double) is a `SyntaxError`: NeMo Gym cannot load such a row either.
 * The input is valid JSON (callers parse it first); only the parts NeMo Gym treats differently are
 * checked here.
 */
import { BACKSLASH, COLON, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../contract/json-chars.js';

/** An object's members as orjson's dict holds them: canonical value text under the decoded key. */
export type Members = Map<string, string>;

const INT_MIN = -(2n ** 63n);
const UINT_MAX = 2n ** 64n - 1n;
const NONE: ReadonlySet<string> = new Set();
/** A surrogate, written or escaped: the only strings a skipped value must decode to check. */
const SURROGATE_TEXT = /\\u[dD][89a-fA-F]|[\ud800-\udfff]/;
const SCALAR = /true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A finite double as orjson (ryu) writes it. */
export function orjsonFloat(x: number): string {
  if (!Number.isFinite(x)) throw new SyntaxError('number is infinity when parsed as double (orjson refuses it)');
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const kk = Number(exp) + 1;
  const k = kk - digits.length;
  let out: string;
  if (k >= 0 && kk <= 16) out = `${digits}${'0'.repeat(k)}.0`;
  else if (kk > 0 && kk <= 16) out = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) out = `0.${'0'.repeat(-kk)}${digits}`;
  else if (digits.length === 1) out = `${digits}e${kk - 1}`;
  else out = `${digits[0]}.${digits.slice(1)}e${kk - 1}`;
  return x < 0 ? `-${out}` : out;
}

/** A number literal as orjson reads and writes it back. */
export function orjsonNumber(literal: string): string {
  if (!/[.eE]/.test(literal)) {
    const n = BigInt(literal);
    if (n >= INT_MIN && n <= UINT_MAX) return n.toString();
  }
  return orjsonFloat(Number(literal));
}

/** A reader over one JSON text that hands back values in orjson's written form. */
export class OrjsonReader {
  private i = 0;
  constructor(private readonly text: string) {}

  private ws(): void {
    while (this.i < this.text.length && isJsonWhitespace(this.text.charCodeAt(this.i))) this.i++;
  }

  private expect(c: number): void {
    this.ws();
    if (this.text.charCodeAt(this.i) !== c) throw new SyntaxError(`expected ${String.fromCharCode(c)} at offset ${this.i}`);
    this.i++;
  }

  /** Moves past the string at the cursor; returns its raw text (quotes included) and whether it has escapes. */
  private stringRaw(): { raw: string; escaped: boolean } {
    const start = this.i;
    let from = start + 1;
    for (;;) {
      const q = this.text.indexOf('"', from);
      if (q < 0) throw new SyntaxError(`unterminated string at offset ${start}`);
      let b = q - 1;
      while (b > start && this.text.charCodeAt(b) === BACKSLASH) b--;
      if ((q - 1 - b) % 2 === 0) {
        this.i = q + 1;
        const raw = this.text.slice(start, this.i);
        return { raw, escaped: raw.indexOf('\\') >= 0 };
      }
      from = q + 1;
    }
  }

  private string(): string {
    const start = this.i;
    const { raw, escaped } = this.stringRaw();
    const s = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    if (LONE_SURROGATE.test(s)) throw new SyntaxError(`a lone surrogate in the string at offset ${start} (orjson refuses it)`);
    return s;
  }

  /** Moves past the value at the cursor without writing it (its strings are still checked as orjson reads them). */
  private skipValue(): void {
    this.ws();
    const c = this.text.charCodeAt(this.i);
    if (c !== LBRACE && c !== LBRACKET) {
      this.value();
      return;
    }
    let depth = 0;
    do {
      const ch = this.text.charCodeAt(this.i);
      if (ch === QUOTE) {
        const { raw } = this.stringRaw();
        if (SURROGATE_TEXT.test(raw)) {
          this.i -= raw.length;
          this.string();
        }
        continue;
      }
      if (ch === 0x2d || (ch >= 0x30 && ch <= 0x39)) {
        this.value(); // a number: orjson refuses one beyond a double
        continue;
      }
      if (ch === LBRACE || ch === LBRACKET) depth++;
      else if (ch === RBRACE || ch === RBRACKET) depth--;
      this.i++;
    } while (depth > 0);
  }

  /** The members of the object at the cursor; the values of `drop`'s keys are passed over and left out. */
  members(drop: ReadonlySet<string> = NONE): Members {
    this.expect(LBRACE);
    const out: Members = new Map();
    this.ws();
    if (this.text.charCodeAt(this.i) === RBRACE) return (this.i++, out);
    for (;;) {
      this.ws();
      const key = this.string();
      this.expect(COLON);
      if (drop.has(key)) this.skipValue();
      else out.set(key, this.value());
      this.ws();
      if (this.text.charCodeAt(this.i++) === RBRACE) return out;
    }
  }

  /** The elements of the array at the cursor. */
  elements(): string[] {
    this.expect(LBRACKET);
    const out: string[] = [];
    this.ws();
    if (this.text.charCodeAt(this.i) === RBRACKET) return (this.i++, out);
    for (;;) {
      out.push(this.value());
      this.ws();
      if (this.text.charCodeAt(this.i++) === RBRACKET) return out;
    }
  }

  /** The value at the cursor, written as orjson writes it. */
  value(): string {
    this.ws();
    const c = this.text.charCodeAt(this.i);
    if (c === LBRACE) return writeObject(this.members());
    if (c === LBRACKET) return `[${this.elements().join(',')}]`;
    if (c === QUOTE) return JSON.stringify(this.string());
    SCALAR.lastIndex = this.i;
    const m = SCALAR.exec(this.text);
    if (m === null) throw new SyntaxError(`not a JSON value at offset ${this.i}`);
    this.i += m[0].length;
    return m[0] === 'true' || m[0] === 'false' || m[0] === 'null' ? m[0] : orjsonNumber(m[0]);
  }
}

/** An object's members written as orjson writes a dict. */
export function writeObject(members: Members): string {
  let out = '{';
  for (const [k, v] of members) out += `${out.length > 1 ? ',' : ''}${JSON.stringify(k)}:${v}`;
  return `${out}}`;
}

/** The members of an object's text (without `drop`'s keys). */
export function readMembers(text: string, drop?: ReadonlySet<string>): Members {
  return new OrjsonReader(text).members(drop);
}

/** The elements of an array's text. */
export function readElements(text: string): string[] {
  return new OrjsonReader(text).elements();
}
