/**
 * `setFields` (src/contract/json-spans.ts) on bytes: top-level members assigned in one JSON object
 * the byte scanner vouched for (`scanJsonObjectLine`, which found the members' value spans), without
 * a string of the object. The same result byte for byte: an existing member (its last occurrence,
 * the one the scanner reports) takes the new value in place, a new one is appended after the last
 * member as `,"key":value`; everything else, whitespace included, is kept.
 */
import { isJsonWhitespace } from '../contract/json-chars.js';
import { MemberNames } from '../contract/json-line-scan.js';

/** One member to assign: its slot in the scan's `MemberNames`, and its new raw value. */
export interface Assignment {
  slot: number;
  value: Uint8Array;
}

/** The names of a scan, with the bytes an appended member starts with (`"key":`, `,"key":`). */
export class AssignableNames extends MemberNames {
  readonly first: Buffer[];
  readonly next: Buffer[];
  constructor(names: readonly string[]) {
    super(names);
    this.first = names.map((n) => Buffer.from(`${JSON.stringify(n)}:`, 'utf8'));
    this.next = names.map((n) => Buffer.from(`,${JSON.stringify(n)}:`, 'utf8'));
  }
}

/**
 * `b[start, end)` (an object `scanJsonObjectLine` vouched for with `names`, its spans in `slots`)
 * with `assignments` made, in their order for the appended ones; `end` is kept as the object's end
 * (whitespace after the closing brace stays). A slot assigned twice takes the later value. The
 * result is the pieces to write one after the other (views of `b` and the values): a caller that
 * writes many rows copies them once, into its own buffer.
 */
export function assignMembers(
  b: Buffer,
  start: number,
  end: number,
  names: AssignableNames,
  slots: Int32Array,
  assignments: Assignment[],
): Uint8Array[] {
  let close = end - 1;
  while (isJsonWhitespace(b[close])) close--;
  let last = close - 1;
  while (isJsonWhitespace(b[last])) last--;
  // No member before the closing brace: the last byte before it is the opening one.
  let members = b[last] !== 0x7b;
  const lastEnd = last + 1;
  const inPlace: Assignment[] = [];
  const appended: Assignment[] = [];
  for (const a of assignments) {
    const list = slots[2 * a.slot] >= 0 ? inPlace : appended;
    const same = list.findIndex((x) => x.slot === a.slot);
    if (same >= 0) list[same] = a;
    else list.push(a);
  }
  inPlace.sort((x, y) => slots[2 * x.slot] - slots[2 * y.slot]);
  const parts: Uint8Array[] = [];
  let from = start;
  for (const a of inPlace) {
    parts.push(b.subarray(from, slots[2 * a.slot]), a.value);
    from = slots[2 * a.slot + 1];
  }
  parts.push(b.subarray(from, lastEnd));
  for (const a of appended) {
    parts.push(members ? names.next[a.slot] : names.first[a.slot], a.value);
    members = true;
  }
  parts.push(b.subarray(lastEnd, end));
  return parts;
}
