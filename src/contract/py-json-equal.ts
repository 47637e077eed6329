/**
 * Python's `==` between two JSON values as NeMo Gym reads them (orjson), decided on their raw texts
 * so integers above 2^53 are compared exactly: an integer spelling is an exact integer, a float
 * spelling the nearest double; `1 == 1.0 == true`, `0 == false`; objects compare by key set and
 * values (a repeated key keeps its last value), arrays element by element; strings after decoding.
 */
import { BACKSLASH, COLON, COMMA, isJsonWhitespace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from './json-chars.js';

type PyValue =
  | { t: 'null' }
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'str'; v: string }
  | { t: 'list'; v: PyValue[] }
  | { t: 'dict'; v: Map<string, PyValue> };

/** Characters that end a scalar token. */
const SCALAR_END = new Set([COMMA, RBRACE, RBRACKET]);

/** A parser of one valid JSON text (the texts come from rows already parsed once; no error recovery). */
class Reader {
  i = 0;
  constructor(private readonly text: string) {}

  private ws(): void {
    while (this.i < this.text.length && isJsonWhitespace(this.text.charCodeAt(this.i))) this.i++;
  }

  private string(): string {
    const start = this.i;
    let j = start + 1;
    let escaped = false;
    for (;;) {
      const c = this.text.charCodeAt(j);
      if (c === BACKSLASH) {
        escaped = true;
        j += 2;
        continue;
      }
      j++;
      if (c === QUOTE) break;
    }
    this.i = j;
    const raw = this.text.slice(start, j);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  value(): PyValue {
    this.ws();
    const c = this.text.charCodeAt(this.i);
    if (c === QUOTE) return { t: 'str', v: this.string() };
    if (c === LBRACE) {
      const v = new Map<string, PyValue>();
      this.i++;
      this.ws();
      if (this.text.charCodeAt(this.i) === RBRACE) this.i++;
      else
        for (;;) {
          this.ws();
          const key = this.string();
          this.ws();
          if (this.text.charCodeAt(this.i) === COLON) this.i++;
          v.set(key, this.value());
          this.ws();
          if (this.text.charCodeAt(this.i++) !== COMMA) break;
        }
      return { t: 'dict', v };
    }
    if (c === LBRACKET) {
      const v: PyValue[] = [];
      this.i++;
      this.ws();
      if (this.text.charCodeAt(this.i) === RBRACKET) this.i++;
      else
        for (;;) {
          v.push(this.value());
          this.ws();
          if (this.text.charCodeAt(this.i++) !== COMMA) break;
        }
      return { t: 'list', v };
    }
    const start = this.i;
    while (this.i < this.text.length && !SCALAR_END.has(this.text.charCodeAt(this.i))) this.i++;
    const token = this.text.slice(start, this.i).trimEnd();
    if (token === 'null') return { t: 'null' };
    // Python's bool is an int: True == 1, False == 0.
    if (token === 'true' || token === 'false') return { t: 'int', v: token === 'true' ? 1n : 0n };
    if (/^-?\d+$/.test(token)) return { t: 'int', v: BigInt(token) };
    return { t: 'float', v: Number(token) };
  }
}

function numberEqual(int: bigint, float: number): boolean {
  return Number.isInteger(float) && BigInt(float) === int;
}

function equal(a: PyValue, b: PyValue): boolean {
  if (a.t === 'int' && b.t === 'float') return numberEqual(a.v, b.v);
  if (a.t === 'float' && b.t === 'int') return numberEqual(b.v, a.v);
  if (a.t !== b.t) return false;
  switch (a.t) {
    case 'null':
      return true;
    case 'int':
    case 'float':
    case 'str':
      return a.v === (b as typeof a).v;
    case 'list': {
      const bv = (b as typeof a).v;
      return a.v.length === bv.length && a.v.every((x, i) => equal(x, bv[i]));
    }
    case 'dict': {
      const bv = (b as typeof a).v;
      if (a.v.size !== bv.size) return false;
      for (const [k, x] of a.v) {
        const y = bv.get(k);
        if (y === undefined || !equal(x, y)) return false;
      }
      return true;
    }
  }
}

/** Python `==` of the JSON values whose raw texts are `a` and `b` (each one valid JSON value). */
export function pyJsonEqual(a: string, b: string): boolean {
  if (a === b) return true;
  return equal(new Reader(a).value(), new Reader(b).value());
}
