/**
 * Rows grouped for `/aggregate_metrics` (spec §4.13, §4.15) as NeMo Gym 0.7.0 groups them: by
 * (run, resources server), a run being the rows' environment-server stamp, else their agent's name,
 * and each group named by its run's label (`labelRuns`: the agent's name when that agent ran in one
 * run only, else the run key). In flat memory: the groups (a handful) are kept in first-seen order,
 * and every row's place goes into one external sort by (group, key), stable, so equal keys keep the
 * order rows were added. The sorted places are then split into one place file per group, from which
 * its body is streamed.
 */
import { join } from 'node:path';
import { compareKeys, type RowKey } from '../contract/row-key.js';
import { labelRuns } from '../contract/row-route.js';
import type { AggregationTarget, RowPlace } from './aggregate-metrics-file.js';
import { ExternalSorter, type RecordCodec } from '../io/external-sort.js';
import { PlaceFileWriter } from './place-file.js';
import { readRowKey, rowKeySize, writeRowKey } from '../io/row-key-codec.js';

/** A row's place and the group it belongs to: what the sort orders. */
interface GroupedPlace extends RowPlace {
  group: number;
}

const groupedPlaceCodec: RecordCodec<GroupedPlace> = {
  size: (r) => 20 + rowKeySize(r.key),
  write(r, buf, at) {
    buf.writeUInt32LE(r.group, at);
    buf.writeUInt32LE(r.file, at + 4);
    buf.writeDoubleLE(r.offset, at + 8);
    buf.writeUInt32LE(r.length, at + 16);
    writeRowKey(r.key, buf, at + 20);
  },
  read(buf, at) {
    const [key] = readRowKey(buf, at + 20);
    return {
      group: buf.readUInt32LE(at),
      file: buf.readUInt32LE(at + 4),
      offset: buf.readDoubleLE(at + 8),
      length: buf.readUInt32LE(at + 16),
      key,
    };
  },
};

function compareGroupedPlaces(a: GroupedPlace, b: GroupedPlace): number {
  return a.group - b.group || compareKeys(a.key, b.key);
}

/** One group, sorted: its rows' places, in key order, are in `placesPath`. */
export interface SortedGroup {
  /** The group's name in the metrics file (`agent_ref.name`): its run's label. */
  agent: string;
  server: string;
  rows: number;
  placesPath: string;
}

/** Where the groups' sort and place files go, and how much the sort holds in memory. */
export interface AggregateGroupsOptions {
  /** A scratch directory the caller removes afterwards. */
  dir: string;
  /** Records the sort holds in memory before it writes a run file. */
  maxRecords?: number;
}

/** Groups rows by (run, server), keeping the order in which groups are first seen. */
export class AggregateGroups {
  private readonly ids = new Map<string, number>();
  private readonly groups: Array<{ run: string; server: string }> = [];
  /** Per run key, the agent name of its first row in key order (the first added among equal keys). */
  private readonly firstOfRun = new Map<string, { key: RowKey; agent: string | undefined }>();
  private readonly sorter: ExternalSorter<GroupedPlace>;

  constructor(private readonly opts: AggregateGroupsOptions) {
    this.sorter = new ExternalSorter({
      dir: opts.dir,
      name: 'aggregate-rows',
      compare: compareGroupedPlaces,
      codec: groupedPlaceCodec,
      maxRecords: opts.maxRecords,
    });
  }

  /** Groups seen so far. */
  get size(): number {
    return this.groups.length;
  }

  /** Adds a row of run `target` to the group of (run, server). */
  async add(target: AggregationTarget, server: string, place: RowPlace): Promise<void> {
    const run = target.runKey;
    const first = this.firstOfRun.get(run);
    if (first === undefined || compareKeys(place.key, first.key) < 0)
      this.firstOfRun.set(run, { key: place.key, agent: target.route.agent });
    const id = `${run}\u0000${server}`;
    let group = this.ids.get(id);
    if (group === undefined) {
      group = this.groups.length;
      this.ids.set(id, group);
      this.groups.push({ run, server });
    }
    await this.sorter.add({ group, key: place.key, file: place.file, offset: place.offset, length: place.length });
  }

  /**
   * The groups in first-seen order, each with its rows sorted by key (stable) in its own place
   * file `<dir>/group<N>.places`. Call once, after the last `add`.
   */
  async sorted(): Promise<SortedGroup[]> {
    const labels = labelRuns(new Map([...this.firstOfRun].map(([run, first]) => [run, first.agent])));
    const out: SortedGroup[] = this.groups.map((g, i) => ({
      agent: labels.get(g.run)!,
      server: g.server,
      rows: 0,
      placesPath: join(this.opts.dir, `group${i}.places`),
    }));
    let writer: PlaceFileWriter | null = null;
    let current = -1;
    try {
      for await (const r of this.sorter.sorted()) {
        if (r.group !== current) {
          await writer?.close();
          writer = null;
          current = r.group;
          writer = await PlaceFileWriter.create(out[current].placesPath);
        }
        await writer!.add(r);
        out[current].rows++;
      }
    } finally {
      await writer?.close();
      await this.sorter.dispose();
    }
    return out;
  }
}
