/**
 * One manifest entry's trajectory, checked in NeMo Gym 0.7.0's order: read it, validate it, compare
 * its SHA-256 with the pin, compare the Gym key it declares with the entry's, project it. What the
 * plan keeps of it: where it really is, its identity for the one-to-one checks, its length and
 * digest (a batch proves its read by them), and whether its projection calls tools.
 */
import { trajectoryFile, type ManifestEntry } from '../atif/manifest.js';
import { projectTrajectory } from '../atif/project.js';
import { AtifProjectionError } from '../atif/supported.js';
import { readTrajectoryFile, TrajectoryFileRefused } from '../atif/trajectory-file.js';
import { checkDeclaredSource, checkPinnedSha256, readTrajectory, trajectoryIdentity } from '../atif/trajectory.js';
import { lineDigest, type LineDigest } from '../io/line-digest.js';
import { pathIdentity, type PathIdentity } from '../io/same-file.js';

/**
 * Where each of an entry's problems ranks among those of the same entry, in 0.7.0's order (the
 * first problem of the run is the lowest (entry, rank)): the key repeated, the trajectory
 * unreadable or invalid, its hash, its declared key, no materialized input, its projection, the
 * input's request parameters, then the path, content and identity repeated.
 */
export const Rank = {
  RepeatedKey: 0,
  Unreadable: 1,
  HashMismatch: 2,
  DeclaredKey: 3,
  NoInput: 4,
  Projection: 5,
  NoParams: 6,
  RepeatedPath: 7,
  RepeatedContent: 8,
  RepeatedIdentity: 9,
} as const;

export interface EntryFacts {
  file: string;
  /** Where the file really is (symlinks resolved) and its inode: two entries may not name one file. */
  id: PathIdentity;
  sha256: string;
  /** `('trajectory_id', ...)` or `('content_sha256', ...)`: two entries may not be one trajectory. */
  identity: string;
  length: number;
  digest: LineDigest;
  functionCalls: boolean;
}

export interface EntryProblem {
  rank: number;
  message: string;
}

/** Reads and checks the trajectory of `entry`; `refuseAlias` throws if the file is one the run writes. */
export async function checkEntry(
  manifestPath: string,
  entry: ManifestEntry,
  refuseAlias: (file: string, id: PathIdentity) => void,
): Promise<EntryFacts | EntryProblem> {
  const file = trajectoryFile(manifestPath, entry.trajectoryPath);
  const id = await pathIdentity(file);
  refuseAlias(file, id);
  let bytes: Buffer;
  try {
    bytes = await readTrajectoryFile(id.real);
  } catch (err) {
    if (err instanceof TrajectoryFileRefused) return { rank: Rank.Unreadable, message: `the ATIF trajectory ${id.real} ${err.message}` };
    return { rank: Rank.Unreadable, message: `could not read ATIF trajectory ${id.real}: ${(err as Error).message}` };
  }
  let rank: number = Rank.Unreadable;
  try {
    const { trajectory, sourceSha256 } = readTrajectory(bytes, id.real);
    rank = Rank.HashMismatch;
    checkPinnedSha256(id.real, entry.expectedSha256, sourceSha256);
    rank = Rank.DeclaredKey;
    checkDeclaredSource(trajectory, { task: entry.task, rollout: entry.rollout });
    rank = Rank.Projection;
    const projection = projectTrajectory(trajectory);
    return {
      file,
      id,
      sha256: sourceSha256,
      identity: trajectoryIdentity(trajectory),
      length: bytes.length,
      digest: lineDigest(bytes),
      functionCalls: projection.hasFunctionCalls,
    };
  } catch (err) {
    if (!(err instanceof AtifProjectionError)) throw err;
    // Refusals of the document's content do not name the file; say which it is.
    return { rank, message: err.message.includes(id.real) ? err.message : `${id.real}: ${err.message}` };
  }
}
