/**
 * A JSON array of objects held in a file, read in bounded memory: where each top-level member of
 * each object sits (byte ranges, found by one streaming pass). A run's aggregate metrics file is
 * such an array (one entry per agent), and each entry's `group_level_metrics` holds one entry per
 * task (49 MB at 10^5 rows; parsed whole it took 372 MiB): the report reads only `agent_ref` and
 * `key_metrics` of each entry, parsing just their bytes.
 */
import { COMMA, isJsonWhitespace, LBRACE, LBRACKET, RBRACKET } from '../contract/json-chars.js';
import { fail, MemberSpans, scanFile, type ByteSpan } from './json-file-members.js';

/** The streaming pass over the array: its brackets and commas here, each object's bytes in a `MemberSpans`. */
class ArrayMemberSpans {
  readonly objects: Map<string, ByteSpan>[] = [];
  private state: 'open' | 'first' | 'element' | 'comma' | 'done' = 'open';
  private current: MemberSpans | null = null;

  feed(buf: Buffer, n: number, pos: number): void {
    let i = 0;
    while (i < n) {
      if (this.current) {
        i = this.current.feed(buf, n, pos, i, true);
        if (this.current.done) {
          this.objects.push(this.current.members);
          this.current = null;
          this.state = 'comma';
        }
        continue;
      }
      this.step(buf[i], pos + i);
      i++;
    }
  }

  private step(c: number, at: number): void {
    if (isJsonWhitespace(c)) return;
    if (this.state === 'open') {
      if (c !== LBRACKET) fail(at, 'not a JSON array');
      this.state = 'first';
    } else if (this.state === 'first' || this.state === 'element') {
      if (c === RBRACKET && this.state === 'first') this.state = 'done';
      else if (c !== LBRACE) fail(at, 'an array element is not an object');
      else {
        this.current = new MemberSpans();
        this.current.feed(Buffer.from([c]), 1, at);
      }
    } else if (this.state === 'comma') {
      if (c === COMMA) this.state = 'element';
      else if (c === RBRACKET) this.state = 'done';
      else fail(at, "expected ',' or ']'");
    } else fail(at, 'unexpected data after the JSON value');
  }

  finish(size: number): void {
    if (this.state !== 'done') fail(size, 'unexpected end of data');
  }
}

/**
 * The objects of the JSON array in `path`, each as its top-level members: key -> byte span of the
 * value. Checks the structure as `jsonFileMembers` does (and that every element is an object),
 * throwing a `SyntaxError` naming the byte where it breaks.
 */
export async function jsonFileArrayMembers(path: string): Promise<Map<string, ByteSpan>[]> {
  return (await scanFile(path, new ArrayMemberSpans())).objects;
}
