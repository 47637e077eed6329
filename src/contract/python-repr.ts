/**
 * Python `repr()` of JSON-like values, for messages that NeMo Gym prints with `{value!r}` or by
 * formatting a list/dict (spec §4.2, §4.3, §4.7).
 */

// Characters Python's str.isprintable() rejects: Other (Cc, Cf, Cs, Co, Cn) and separators other
// than the ASCII space (Zl, Zp, Zs).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

const SCALAR_AT = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null/y;

function hex(cp: number, width: number): string {
  return cp.toString(16).padStart(width, '0');
}

/** Python `repr(str)`: single quotes unless the text has `'` and no `"`; Python's escapes. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + hex(cp, 2);
    else if (cp < 0x7f) out += ch;
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      out += cp <= 0xff ? '\\x' + hex(cp, 2) : cp <= 0xffff ? '\\u' + hex(cp, 4) : '\\U' + hex(cp, 8);
    } else out += ch;
  }
  return out + quote;
}

/**
 * Python `repr(float)`: the shortest round-trip digits, always with a fractional part or an
 * exponent (`1.0`, `0.0001`, `1e-05`, `1e+16`, `1.5e+300`), `inf`, `-inf`, `nan`.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const [mant, expText] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  const decpt = exp + 1; // value = 0.<digits> * 10^decpt
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/**
 * Python `repr()` of a parsed JSON value: `None`, `True`/`False`, ints, floats, `'str'`, lists
 * `[1, 2]` and dicts `{'a': 1}`. A JS number has no int/float distinction after `JSON.parse`:
 * integral numbers print as ints (`1.0` prints `1`), others as floats. `bigint` prints as an int.
 * Use `pythonReprJson` on the raw text when the exact Python form matters.
 */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    return Number.isInteger(value) ? BigInt(value).toString() : pyFloatRepr(value);
  }
  if (typeof value === 'string') return pyStrRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const items = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pyStrRepr(k)}: ${pythonRepr(v)}`);
    return `{${items.join(', ')}}`;
  }
  // Functions and symbols never come from JSON.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return pyStrRepr(String(value));
}

/**
 * Python `repr()` of the value `orjson.loads(raw)` would give, computed from the raw JSON text:
 * exact for big integers, `1.0` stays a float, a repeated key keeps its first position and its last
 * value (Python dict). `raw` must be valid JSON (validate it first); throws `SyntaxError` otherwise.
 */
export function pythonReprJson(raw: string): string {
  let i = 0;
  const ws = () => {
    while (i < raw.length && ' \t\n\r'.includes(raw[i])) i++;
  };
  const value = (): string => {
    ws();
    const c = raw[i];
    if (c === '{') {
      i++;
      const entries = new Map<string, string>();
      ws();
      if (raw[i] === '}') {
        i++;
        return '{}';
      }
      for (;;) {
        ws();
        const key = JSON.parse(stringToken()) as string;
        ws();
        if (raw[i++] !== ':') throw new SyntaxError(`expected ':' at offset ${i - 1}`);
        entries.set(key, value());
        ws();
        const d = raw[i++];
        if (d === '}') break;
        if (d !== ',') throw new SyntaxError(`expected ',' or '}' at offset ${i - 1}`);
      }
      return `{${[...entries].map(([k, v]) => `${pyStrRepr(k)}: ${v}`).join(', ')}}`;
    }
    if (c === '[') {
      i++;
      const items: string[] = [];
      ws();
      if (raw[i] === ']') {
        i++;
        return '[]';
      }
      for (;;) {
        items.push(value());
        ws();
        const d = raw[i++];
        if (d === ']') break;
        if (d !== ',') throw new SyntaxError(`expected ',' or ']' at offset ${i - 1}`);
      }
      return `[${items.join(', ')}]`;
    }
    if (c === '"') return pyStrRepr(JSON.parse(stringToken()) as string);
    SCALAR_AT.lastIndex = i;
    const m = SCALAR_AT.exec(raw);
    if (!m) throw new SyntaxError(`invalid JSON value at offset ${i}`);
    i += m[0].length;
    if (m[0] === 'true') return 'True';
    if (m[0] === 'false') return 'False';
    if (m[0] === 'null') return 'None';
    if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]).toString();
    return pyFloatRepr(Number(m[0]));
  };
  const stringToken = (): string => {
    if (raw[i] !== '"') throw new SyntaxError(`expected a string at offset ${i}`);
    let j = i + 1;
    while (j < raw.length && raw[j] !== '"') j += raw[j] === '\\' ? 2 : 1;
    if (j >= raw.length) throw new SyntaxError(`unterminated string at offset ${i}`);
    const tok = raw.slice(i, j + 1);
    i = j + 1;
    return tok;
  };
  const out = value();
  ws();
  if (i !== raw.length) throw new SyntaxError(`unexpected text at offset ${i}`);
  return out;
}
