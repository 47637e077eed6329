/**
 * Strict JSON for ATIF files (RFC 8259, as NeMo Gym 0.7.0 reads them): integers stay exact (a
 * `bigint` beyond 2^53), floats stay floats (`PyFloat`, so `1.0` and `1` differ as they do in
 * Python), a repeated object key, `NaN`/`Infinity`, and a number that a double cannot hold exactly
 * are errors. Error texts follow Python's `json` module (`Expecting value: line 1 column 5 (char 4)`).
 *
 * A parser of its own, not `JSON.parse` (which keeps the last of repeated keys, and reads `1.0`
 * as `1` and big integers rounded) nor the row scanner (src/contract/json-line-scan.ts, which
 * locates a row's members but builds no values): an ATIF file must read as NeMo Gym reads it.
 */

/** A JSON number written with a fraction or an exponent: a Python float. */
export class PyFloat {
  constructor(readonly value: number) {}
}

export type JsonValue = null | boolean | string | number | bigint | PyFloat | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export class StrictJsonError extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;
/** A run of string characters that need no attention: not a quote, a backslash or a control character. */
const PLAIN = /[^"\\\u0000-\u001f]*/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** `value`'s decimal digits without sign, leading/trailing zeros, and the exponent of their first digit. */
function decimalOf(text: string): { digits: string; exp: number } {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const intPart = m[1];
  const frac = m[2] ?? '';
  const all = intPart + frac;
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  return { digits, exp: Number(m[3] ?? 0) + intPart.length - lead };
}

/** Python's check: the float read from `text` must equal `text` exactly as a decimal. */
function exactFloat(text: string): PyFloat {
  const value = Number(text);
  if (!Number.isFinite(value)) throw new StrictJsonError(`JSON number '${text}' exceeds the finite float range`);
  const written = decimalOf(text);
  if (value === 0) {
    if (written.digits !== '') throw new StrictJsonError(`JSON number '${text}' underflows the finite float range`);
    return new PyFloat(value);
  }
  const held = decimalOf(Math.abs(value).toExponential().replace('e+', 'e'));
  if (held.digits !== written.digits || held.exp !== written.exp) {
    throw new StrictJsonError(`JSON number '${text}' cannot be represented without precision loss`);
  }
  return new PyFloat(value);
}

class Parser {
  private at = 0;
  constructor(private readonly s: string) {}

  fail(what: string, at = this.at): never {
    const before = this.s.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new StrictJsonError(`${what}: line ${line} column ${column} (char ${at})`);
  }

  ws(): void {
    WS.lastIndex = this.at;
    WS.exec(this.s);
    this.at = WS.lastIndex;
  }

  document(): JsonValue {
    this.ws();
    const v = this.value();
    this.ws();
    if (this.at < this.s.length) this.fail('Extra data');
    return v;
  }

  value(): JsonValue {
    const c = this.s[this.at];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    for (const [word, v] of [
      ['null', null],
      ['true', true],
      ['false', false],
    ] as const) {
      if (this.s.startsWith(word, this.at)) {
        this.at += word.length;
        return v;
      }
    }
    for (const word of ['NaN', 'Infinity', '-Infinity']) {
      if (this.s.startsWith(word, this.at)) throw new StrictJsonError(`non-JSON numeric constant '${word}'`);
    }
    NUMBER.lastIndex = this.at;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail('Expecting value');
    this.at = NUMBER.lastIndex;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return exactFloat(m[0]);
  }

  object(): JsonObject {
    const obj = Object.create(null) as JsonObject;
    this.at++;
    this.ws();
    if (this.s[this.at] === '}') {
      this.at++;
      return obj;
    }
    for (;;) {
      if (this.s[this.at] !== '"') this.fail('Expecting property name enclosed in double quotes');
      const key = this.string();
      this.ws();
      if (this.s[this.at] !== ':') this.fail("Expecting ':' delimiter");
      this.at++;
      this.ws();
      const v = this.value();
      if (Object.prototype.hasOwnProperty.call(obj, key)) throw new StrictJsonError(`duplicate object key ${pyQuote(key)}`);
      obj[key] = v;
      this.ws();
      const c = this.s[this.at++];
      if (c === '}') return obj;
      if (c !== ',') this.fail("Expecting ',' delimiter", this.at - 1);
      this.ws();
    }
  }

  array(): JsonValue[] {
    const out: JsonValue[] = [];
    this.at++;
    this.ws();
    if (this.s[this.at] === ']') {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.at++];
      if (c === ']') return out;
      if (c !== ',') this.fail("Expecting ',' delimiter", this.at - 1);
      this.ws();
    }
  }

  string(): string {
    const start = this.at++;
    let out = '';
    for (;;) {
      PLAIN.lastIndex = this.at;
      PLAIN.exec(this.s);
      out += this.s.slice(this.at, PLAIN.lastIndex);
      this.at = PLAIN.lastIndex;
      const c = this.s[this.at];
      if (c === undefined) this.fail('Unterminated string starting at', start);
      if (c === '"') {
        this.at++;
        return out;
      }
      if (c !== '\\') this.fail('Invalid control character at');
      const e = this.s[this.at + 1];
      if (e === 'u') {
        const hex = this.s.slice(this.at + 2, this.at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('Invalid \\uXXXX escape', this.at + 1);
        out += String.fromCharCode(parseInt(hex, 16));
        this.at += 6;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
        out += ESCAPES[e];
        this.at += 2;
      } else {
        this.fail('Invalid \\escape', this.at);
      }
    }
  }
}

/** Python's repr of a str for these messages: single quotes (the texts here never need more). */
function pyQuote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Parses `text` strictly (see the module comment); throws `StrictJsonError` with Python's wording. */
export function parseStrictJson(text: string): JsonValue {
  return new Parser(text).document();
}

/** Parses UTF-8 bytes strictly (a leading byte-order mark is skipped, as Python's `json.loads` of bytes does). */
export function parseStrictJsonBytes(bytes: Uint8Array): JsonValue {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new StrictJsonError("'utf-8' codec can't decode the bytes: the file is not valid UTF-8");
  }
  return parseStrictJson(text);
}

/** A plain JSON object (not an array, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** A JSON integer (not a bool, not a float). */
export function isJsonInt(v: unknown): v is number | bigint {
  return (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
}

/** A deep copy of a strict-JSON value (floats stay `PyFloat`; `structuredClone` would lose their class). */
export function cloneJson<T extends JsonValue>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => cloneJson(x)) as T;
  if (isJsonObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v)) out[k] = cloneJson(v[k]);
    return out as T;
  }
  return v;
}
