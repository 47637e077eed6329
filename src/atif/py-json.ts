/**
 * Python's `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` of strict-JSON values:
 * what NeMo Gym writes for tool-call arguments, structured tool results and content hashes. Floats
 * print as Python prints them (`1.0`, `1e-07`), integers exactly, non-ASCII text as is.
 */
import { pyFloatRepr, pythonRepr, pyStrRepr } from '../contract/python-repr.js';
import { compareCodePoints } from '../contract/row-key.js';
import { PyFloat, type JsonValue } from './strict-json.js';

/** Dumps `value`; `sortKeys` sorts object keys by code point, as Python's `sort_keys=True`. */
export function pyJsonDumps(value: JsonValue, sortKeys = false): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloatRepr(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (Array.isArray(value)) return `[${value.map((v) => pyJsonDumps(v, sortKeys)).join(',')}]`;
  const keys = Object.keys(value);
  if (sortKeys) keys.sort(compareCodePoints);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${pyJsonDumps(value[k], sortKeys)}`).join(',')}}`;
}

/** Python's `repr()` of a strict-JSON value, for messages (`None`, `True`, `1.0`, `'text'`, lists, dicts). */
export function pyRepr(value: JsonValue): string {
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .map((k) => `${pyStrRepr(k)}: ${pyRepr(value[k])}`)
      .join(', ')}}`;
  }
  return pythonRepr(value);
}
