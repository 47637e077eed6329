/**
 * Raw texts of a few top-level values of a JSONL line, read from its UTF-8 bytes with the row
 * scanner (src/contract/json-line-scan.ts): no string of the whole row is made. The same texts as
 * `topLevelSpans` on the decoded line gives (the last of repeated keys wins; keys written with
 * escapes are decoded). For readers that go through every planned row: the count of the live
 * estimate's units, the keys of a run's unstarted rollouts.
 */
import { scanObjectMembers } from './json-line-scan.js';

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const BACKSLASH = 0x5c;

/** The raw text of each top-level value named in `keys` (ASCII names), undefined where absent; `SyntaxError` when not one JSON object. */
export function rawValuesOfLine(line: Uint8Array, keys: readonly string[]): Array<string | undefined> {
  const scan = scanObjectMembers(line);
  if ('reason' in scan) throw new SyntaxError(`not a single JSON object: ${scan.reason} at byte ${scan.at}`);
  const m = scan.members;
  const at = keys.map(() => -1);
  for (let k = 0; k < m.length; k += 4) {
    for (let j = 0; j < keys.length; j++) {
      if (!keyIs(line, m[k], m[k + 1], keys[j])) continue;
      at[j] = k;
      break;
    }
  }
  return at.map((k) => (k < 0 ? undefined : utf8.decode(line.subarray(m[k + 2], m[k + 3]))));
}

/** Whether the key whose quoted text is `line[start, end)` is `key` (an ASCII name), escapes decoded. */
function keyIs(line: Uint8Array, start: number, end: number, key: string): boolean {
  const n = end - start - 2;
  if (n === key.length) {
    let k = 0;
    while (k < n && line[start + 1 + k] === key.charCodeAt(k)) k++;
    return k === n;
  }
  // Written with escapes (`"rew\u0061rd"`), a key is longer than its name: decoded, as topLevelSpans does.
  if (n < key.length) return false;
  let k = start + 1;
  while (k < end - 1 && line[k] !== BACKSLASH) k++;
  return k < end - 1 && JSON.parse(utf8.decode(line.subarray(start, end))) === key;
}
