/**
 * Keys of excluded failures sidecars that no merged row scores: what `reverify aggregate` reports
 * as missing from the score, counted per key (a key with three failed attempts is one rollout)
 * by an external sort, so memory stays flat.
 */
import { lineKeyId } from '../contract/row-key.js';
import { ExternalSorter, type RecordCodec } from '../io/external-sort.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';

/** A key seen as scored (a merged row) or in a sidecar. */
interface KeySighting {
  id: string;
  scored: boolean;
}

const codec: RecordCodec<KeySighting> = {
  size: (k) => 1 + Buffer.byteLength(k.id),
  write: (k, buf, at) => {
    buf[at] = k.scored ? 1 : 0;
    buf.write(k.id, at + 1);
  },
  read: (buf, at, length) => ({ scored: buf[at] === 1, id: buf.toString('utf8', at + 1, at + length) }),
};

export class MissingKeys {
  private readonly sightings: ExternalSorter<KeySighting>;

  constructor(opts: { dir: string; maxRecords?: number }) {
    this.sightings = new ExternalSorter({
      dir: opts.dir,
      name: 'missing-keys',
      maxRecords: opts.maxRecords,
      codec,
      compare: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    });
  }

  /** A merged row's key id. */
  async scored(id: string): Promise<void> {
    await this.sightings.add({ id, scored: true });
  }

  /** Every keyed row of a sidecar (unreadable lines are left out: the file is not ours to judge). */
  async sidecar(path: string): Promise<void> {
    for await (const line of jsonlLines(path)) {
      if (isBlank(line.text)) continue;
      let id: string | null;
      try {
        id = lineKeyId(line.text);
      } catch {
        continue;
      }
      if (id !== null) await this.sightings.add({ id, scored: false });
    }
  }

  /** Keys seen in a sidecar and never scored. */
  async count(): Promise<number> {
    let missing = 0;
    let current: string | null = null;
    let scored = false;
    const close = () => {
      if (current !== null && !scored) missing++;
    };
    for await (const s of this.sightings.sorted()) {
      if (s.id !== current) {
        close();
        current = s.id;
        scored = false;
      }
      scored ||= s.scored;
    }
    close();
    return missing;
  }
}
