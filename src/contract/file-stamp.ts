/**
 * What a plan records of each file it reads, so a later read can tell the file is the one planned:
 * everything a write to the file changes — its size, its modification and status-change times to
 * the nanosecond (a write in place, even of the same bytes, moves the status-change time), its
 * inode and device (a file replaced by another under the same name). Pure: the stat is the
 * caller's (src/io/file-identity.ts).
 */

/**
 * A file's stamp. The 64-bit values are decimal strings: the stamp travels in plan summaries
 * (JSON, in the workflow history), which has no 64-bit integers.
 */
export interface FileStamp {
  size: number;
  /** Modification time, nanoseconds since the epoch. */
  mtimeNs: string;
  /** Status-change time (any write, rename into place, chmod, link), nanoseconds since the epoch. */
  ctimeNs: string;
  ino: string;
  dev: string;
}

/** The fields of `fs.stat(path, { bigint: true })` a stamp is made of. */
export interface BigStat {
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  dev: bigint;
}

export function stampOf(s: BigStat): FileStamp {
  return { size: Number(s.size), mtimeNs: String(s.mtimeNs), ctimeNs: String(s.ctimeNs), ino: String(s.ino), dev: String(s.dev) };
}

/**
 * True when `now` is the file `planned` recorded. A stamp of another version (fields missing)
 * is never the same: such a plan is refused, not trusted.
 */
export function sameStamp(planned: Partial<FileStamp>, now: FileStamp | null): boolean {
  return (
    now !== null &&
    planned.size === now.size &&
    planned.mtimeNs === now.mtimeNs &&
    planned.ctimeNs === now.ctimeNs &&
    planned.ino === now.ino &&
    planned.dev === now.dev
  );
}

/** A nanosecond time as ISO 8601 with nine fractional digits. */
function isoNs(ns: string): string {
  const n = BigInt(ns);
  const ms = new Date(Number(n / 1_000_000n)).toISOString();
  return ms.replace('Z', `${String(n % 1_000_000n).padStart(6, '0')}Z`);
}

/** What differs between a planned stamp (the fields it has) and the file now, for messages. */
export function stampChanges(planned: Partial<FileStamp>, now: FileStamp): string[] {
  const changes: string[] = [];
  if (planned.size !== undefined && planned.size !== now.size) changes.push(`size ${planned.size} -> ${now.size} bytes`);
  if (planned.mtimeNs !== undefined && planned.mtimeNs !== now.mtimeNs)
    changes.push(`modified ${isoNs(planned.mtimeNs)} -> ${isoNs(now.mtimeNs)}`);
  if (planned.ino !== undefined && (planned.ino !== now.ino || planned.dev !== now.dev))
    changes.push(`replaced: inode ${planned.dev}:${planned.ino} -> ${now.dev}:${now.ino}`);
  // Nothing else tells (the same bytes written again, or the modification time put back): the status change does.
  if (changes.length === 0 && planned.ctimeNs !== undefined && planned.ctimeNs !== now.ctimeNs)
    changes.push(`written to in place at ${isoNs(now.ctimeNs)}`);
  return changes;
}
