/**
 * `--rejudge-saved KEYS`: `all`, `T:R[,T:R…]` (integer indices), or a file of keys — `T:R` lines, or
 * JSONL rows with both indices (lines cut from the output do) — as key ids (`keyId`). A key that
 * cannot be read is one line naming where it is.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { ConfigError } from '../contract/errors.js';
import { lineKeyId, rawKeyId } from '../contract/row-key.js';

const PAIR = /^\s*(-?\d+)\s*:\s*(-?\d+)\s*$/;

/** One `T:R` or JSONL row as a key id, or a one-line error at `where`. */
function keyOfText(text: string, where: string, flag: string): string {
  const pair = PAIR.exec(text);
  let id: string | null = null;
  if (pair) id = rawKeyId(pair[1], pair[2]);
  else if (text.trim().startsWith('{')) {
    try {
      id = lineKeyId(text);
    } catch {
      id = null;
    }
  }
  if (id === null)
    throw new ConfigError(
      `${flag}: ${where}: '${text.trim().slice(0, 80)}' is not a key: write TASK:ROLLOUT (integers), or a JSONL row with _ng_task_index and _ng_rollout_index`,
    );
  return id;
}

/** The keys `value` names (see the file comment). */
export async function rejudgeSavedKeys(value: string, flag = '--rejudge-saved'): Promise<string[] | 'all'> {
  if (value === 'all') return 'all';
  if (!PAIR.test(value.split(',')[0]) && existsSync(value)) {
    const lines = (await readFile(value, 'utf8')).split('\n');
    const keys: string[] = [];
    lines.forEach((line, i) => {
      if (line.trim() !== '') keys.push(keyOfText(line, `${value}:${i + 1}`, flag));
    });
    return [...new Set(keys)];
  }
  return [...new Set(value.split(',').map((part, i) => keyOfText(part, `key ${i + 1} of '${value}'`, flag)))];
}
