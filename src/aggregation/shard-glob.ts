/**
 * `--input-glob` of `reverify aggregate` (spec §4.15): one glob or comma-separated globs, each
 * expanded and sorted, duplicates removed keeping the first occurrence. Node 20 has no
 * `fs.promises.glob` (it arrived in Node 22, experimental) and `path.matchesGlob` is experimental
 * (it prints a warning), so this is a small glob of our own over `readdir`, following Python's
 * `glob.glob(pattern, recursive=True)`:
 *
 * - `*` any run of characters, `?` one character, `[abc]` / `[a-z]` / `[!abc]` a character class
 *   (an unclosed `[` is a literal); none of them matches `/`. There is no backslash escape:
 *   write `[*]` for a literal `*`, as in Python.
 * - `**` as a whole path segment matches zero or more directories (`shards/**` + `/*.jsonl`).
 *   Symbolic links to directories are not descended into by `**` (no loops).
 * - Wildcards do not match names starting with `.` unless the segment itself starts with `.`.
 * - A segment without wildcards is taken literally (it must exist).
 *
 * Matches keep the pattern's form: a relative pattern gives paths relative to `cwd`, as typed.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { compareCodePoints } from '../contract/row-key.js';
import { exists } from '../io/file-exists.js';

/** `--input-glob` split at commas, each part trimmed, empty parts dropped (spec §4.15). */
export function splitGlobs(inputGlob: string): string[] {
  return inputGlob
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
}

/** True when a path segment has glob syntax (`*`, `?` or `[`). */
export function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/** Characters that need a backslash in a `u`-mode regex: outside a class, and inside one (`-` too). */
const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

function escapeChar(ch: string, inClass = false): string {
  return REGEX_SYNTAX.test(ch) || (inClass && ch === '-') ? '\\' + ch : ch;
}

/**
 * The body of a character class starting after `[` at `i`, as a regex class, and the index after
 * its `]`; `null` when the class is not closed (then `[` is a literal, as in Python's fnmatch).
 */
function charClass(segment: string, i: number): { regex: string; next: number } | null {
  const chars = [...segment.slice(i)];
  let j = 0;
  let negate = false;
  if (chars[j] === '!') {
    negate = true;
    j++;
  }
  const items: Array<[string, string]> = [];
  let first = true;
  for (; j < chars.length; j++) {
    const c = chars[j];
    if (c === ']' && !first) {
      const consumed = chars.slice(0, j + 1).join('').length;
      const body = items
        .filter(([lo, hi]) => lo.codePointAt(0)! <= hi.codePointAt(0)!)
        .map(([lo, hi]) => (lo === hi ? escapeChar(lo, true) : `${escapeChar(lo, true)}-${escapeChar(hi, true)}`))
        .join('');
      // Python: an empty class never matches; an empty negated class matches any character.
      const regex = body === '' ? (negate ? '[^/]' : '(?!)') : negate ? `[^/${body}]` : `[${body}]`;
      return { regex, next: i + consumed };
    }
    first = false;
    if (chars[j + 1] === '-' && j + 2 < chars.length && chars[j + 2] !== ']') {
      items.push([c, chars[j + 2]]);
      j += 2;
    } else {
      items.push([c, c]);
    }
  }
  return null;
}

/** A regular expression matching one path segment (a file or directory name) against `segment`. */
export function segmentRegExp(segment: string): RegExp {
  let out = '';
  for (let i = 0; i < segment.length;) {
    const c = segment[i];
    if (c === '*') {
      out += '[^/]*';
      i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '[') {
      const cls = charClass(segment, i + 1);
      if (cls === null) {
        out += '\\[';
        i++;
      } else {
        out += cls.regex;
        i = cls.next;
      }
    } else {
      const cp = segment.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      out += escapeChar(ch);
      i += ch.length;
    }
  }
  return new RegExp(`^${out}$`, 'su');
}

function joinShown(prefix: string, name: string): string {
  if (prefix === '') return name;
  return prefix.endsWith('/') ? prefix + name : `${prefix}/${name}`;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function entries(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** `prefix` and every non-hidden directory below it (no symlinked directories), depth first, sorted. */
async function walkDirs(prefix: string, cwd: string, out: string[]): Promise<void> {
  out.push(prefix);
  const list = (await entries(resolve(cwd, prefix || '.'))).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  list.sort((a, b) => compareCodePoints(a.name, b.name));
  for (const e of list) await walkDirs(joinShown(prefix, e.name), cwd, out);
}

/**
 * Paths matching one glob `pattern` (files and directories), sorted by code point like Python's
 * `sorted()`. Nothing matches -> `[]`. A pattern without wildcards gives itself if it exists.
 */
export async function expandGlob(pattern: string, cwd = process.cwd()): Promise<string[]> {
  const absolute = isAbsolute(pattern);
  const segments = pattern.split('/').filter((s) => s !== '');
  let current: string[] = [absolute ? '/' : ''];
  for (let s = 0; s < segments.length; s++) {
    const seg = segments[s];
    const last = s === segments.length - 1;
    const next = new Set<string>();
    for (const prefix of current) {
      const dir = resolve(cwd, prefix || '.');
      if (seg === '**') {
        const dirs: string[] = [];
        await walkDirs(prefix, cwd, dirs);
        if (!last) for (const d of dirs) next.add(d);
        else {
          // A trailing `**` matches everything below, files included (Python: recursive listing).
          for (const d of dirs) {
            if (d !== prefix) next.add(d);
            for (const e of await entries(resolve(cwd, d || '.'))) {
              if (!e.name.startsWith('.') && !e.isDirectory()) next.add(joinShown(d, e.name));
            }
          }
        }
      } else if (!hasMagic(seg)) {
        const shown = joinShown(prefix, seg);
        const path = resolve(dir, seg);
        if (last ? await exists(path) : await isDirectory(path)) next.add(shown);
      } else {
        const re = segmentRegExp(seg);
        const hiddenOk = seg.startsWith('.');
        for (const e of await entries(dir)) {
          if (e.name.startsWith('.') && !hiddenOk) continue;
          if (!re.test(e.name)) continue;
          const shown = joinShown(prefix, e.name);
          if (last || (await isDirectory(resolve(dir, e.name)))) next.add(shown);
        }
      }
    }
    current = [...next];
    if (current.length === 0) return [];
  }
  if (segments.length === 0) return absolute ? ['/'] : [];
  return current.sort(compareCodePoints);
}

/**
 * Regular files matched by `--input-glob` (spec §4.15): each glob's matches sorted, the lists
 * concatenated in glob order, a file matched again (same resolved path) dropped.
 */
export async function matchShardGlobs(inputGlob: string, cwd = process.cwd()): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const glob of splitGlobs(inputGlob)) {
    for (const path of await expandGlob(glob, cwd)) {
      const abs = resolve(cwd, path);
      if (seen.has(abs)) continue;
      seen.add(abs);
      try {
        if (!(await stat(abs)).isFile()) continue;
      } catch {
        continue;
      }
      out.push(path);
    }
  }
  return out;
}

/** A failures sidecar (`*_failures.jsonl`): never a shard of successes (spec §8 item 7). */
export function isFailuresSidecar(path: string): boolean {
  return basename(path).endsWith('_failures.jsonl');
}
