/**
 * The plan phase of an ATIF run (`--input-format atif`, NeMo Gym 0.7.0's `_prepare_atif_payloads`):
 * every materialized input row and manifest entry checked, each entry's trajectory read once (one
 * at a time) and projected, the entries joined one-to-one with the inputs by key on disk, and the
 * plan written: per row, the manifest line and the input line by offset and digest, and the
 * trajectory's length and digest, so batches read and prove all three. It runs before the
 * outputs are prepared (the preflight comes between), so whatever it creates is removed when the
 * run is refused. Returns counts and what the preflight needs; never rows.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { unpinnedWarning, emptyManifest, parseManifestLine, trajectoryFile } from '../src/atif/manifest.js';
import { AtifProjectionError } from '../src/atif/supported.js';
import { InputError } from '../src/contract/errors.js';
import { compareCodePoints, keyId } from '../src/contract/row-key.js';
import type { FileIdentity, PlanSummary } from '../src/contract/run-spec.js';
import type { RoutingTable } from '../src/config/routing.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { ExternalSorter } from '../src/io/external-sort.js';
import { sameStamp } from '../src/contract/file-stamp.js';
import { fileNow } from '../src/io/file-identity.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { isInside, pathIdentity } from '../src/io/same-file.js';
import { checkEntry, Rank } from '../src/planning/atif-entry.js';
import { addAtifInputs } from '../src/planning/atif-inputs.js';
import { encode, linePlace } from '../src/planning/key-facts.js';
import { findRepeats, FirstProblem, joinEntries, joinedRowOf, joinedRowText } from '../src/planning/atif-join.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../src/planning/keyed-records.js';
import { Names } from '../src/planning/names.js';
import { ATIF_PLAN_RECORD_BYTES } from '../src/planning/plan-file.js';
import { NO_ATTEMPTS } from '../src/planning/plan-attempts.js';
import { PlanFilesWriter, planPathsOf, publishPlanFiles, tmpPlanPaths, type PlanPaths } from '../src/planning/plan-files.js';
import { discardPlan } from './discard-plan.js';
import { whileHeartbeating } from './heartbeating.js';
import { aliasChecker, dataFiles, refuseInputAliases } from '../src/run-checks/input-aliases.js';
import { outputPathsFor } from '../src/contract/output-paths.js';
import { failFastOnUserError } from './user-errors.js';

export interface AtifPlanRequest {
  inputsPath: string;
  manifestPath: string;
  /** The run's `--output` (ATIF runs never get the `unsafe_` prefix). */
  outputPath: string;
  overwrite: boolean;
  routing: RoutingTable;
  limit: number | null;
  /** Records a key join holds in memory before it sorts them to disk (tests make it small). */
  sortMaxRecords?: number;
}

/** What the preflight checks of the selected rows (0.7.0's `_guard_atif_preflight`). */
export interface AtifPreflightFacts {
  /** The resources servers the rows route to, sorted. */
  servers: string[];
  /** Servers of rows with function calls, in the order of their first such row. */
  functionCallServers: string[];
  /** The first row whose input has no resources server (`manifest:line: why`), or null. */
  unroutable: string | null;
}

export interface AtifPlanOutcome extends PlanSummary {
  messages: string[];
  preflight: AtifPreflightFacts;
  workDir: string;
  /** The first directory the plan created (the work directory or an output parent), removed if the run is refused. */
  createdDir: string | null;
}

export function planAtif(req: AtifPlanRequest): Promise<AtifPlanOutcome> {
  return failFastOnUserError(async () => {
    const outputs = outputPathsFor(req.outputPath, '');
    const rules = { overwrite: req.overwrite, resume: false, append: false };
    const reads = dataFiles({ inputsPath: req.inputsPath, rolloutsPath: '', judgeFailedOnly: false, atifManifestPath: req.manifestPath });
    await refuseInputAliases([outputs], reads, rules);
    await clearStaleWorkDir(req.manifestPath, outputs.workDir);
    const createdDir = (await mkdir(outputs.workDir, { recursive: true })) ?? null;
    try {
      const checkAlias = await aliasChecker(outputs, rules);
      const refuseAlias = (flag: string) => (file: string, id: Awaited<ReturnType<typeof pathIdentity>>) =>
        checkAlias({ role: 'trajectory', flag, path: file }, id);
      return await whileHeartbeating(async () => ({
        ...(await writeAtifPlan(req, outputs.workDir, refuseAlias)),
        workDir: outputs.workDir,
        createdDir,
      }));
    } catch (err) {
      await discardPlan(outputs.workDir, createdDir);
      throw err;
    }
  });
}

/**
 * A work directory left by an earlier run is stale (a live run would have been attached to) and is
 * removed, unless a trajectory the manifest lists lies in it: then the run is refused instead.
 */
async function clearStaleWorkDir(manifestPath: string, workDir: string): Promise<void> {
  if (!(await stat(workDir).catch(() => null))) return;
  const dir = await pathIdentity(workDir);
  for await (const line of jsonlLines(manifestPath)) {
    let file: string;
    try {
      file = trajectoryFile(manifestPath, parseManifestLine(line.text, line.lineNo, manifestPath).trajectoryPath);
    } catch {
      continue; // the plan reports it
    }
    if (isInside(await pathIdentity(file), dir)) {
      throw new InputError(
        `${manifestPath}:${line.lineNo}: the trajectory '${file}' is inside the work directory of this run ('${workDir}'), which it deletes: move the file, or choose another --output`,
      );
    }
  }
  await rm(workDir, { recursive: true, force: true });
}

type AliasCheck = (flag: string) => Parameters<typeof checkEntry>[2];

async function writeAtifPlan(
  req: AtifPlanRequest,
  workDir: string,
  refuseAlias: AliasCheck,
): Promise<Omit<AtifPlanOutcome, 'workDir' | 'createdDir'>> {
  const sorter = (name: string) =>
    new ExternalSorter<KeyedRecord>({
      dir: workDir,
      name,
      compare: compareKeyedRecords,
      codec: keyedRecordCodec,
      maxRecords: req.sortMaxRecords,
    });
  const [joined, repeats, kept] = [sorter('atif-join'), sorter('atif-repeats'), sorter('atif-kept')];
  const agents = new Names();
  const servers = new Names();
  const before = { manifest: await fileNow(req.manifestPath), inputs: await fileNow(req.inputsPath) };
  const place = (line: number) => `${req.manifestPath}:${line}`;
  try {
    const counts = await joinChecked(req, { joined, repeats, kept }, { agents, servers }, place, refuseAlias);
    const paths = planPathsOf(join(workDir, 'plan.bin'));
    const written = await writeKeptRows(tmpPlanPaths(paths), kept, { agents, servers }, place);
    const files = await unchangedSince(req, before);
    await publishPlanFiles(paths);
    const summary: PlanSummary = {
      planPath: paths.plan,
      attemptsPath: paths.attempts,
      recordBytes: ATIF_PLAN_RECORD_BYTES,
      files,
      sourcePath: req.manifestPath,
      inputFormat: 'atif',
      rows: written.rows,
      // A manifest's keys are distinct (a repeat stops the plan): every row is one expected rollout.
      keys: written.rows,
      agents: agents.list,
      servers: servers.list,
      rowsPerAgent: written.rowsPerAgent,
    };
    await writeFileAtomic(join(workDir, 'plan.json'), JSON.stringify(summary));
    const messages = counts.unpinned > 0 ? [unpinnedWarning(req.manifestPath, counts.unpinned, counts.entries)] : [];
    return { ...summary, messages, preflight: written.preflight };
  } finally {
    for (const s of [joined, repeats, kept]) await s.dispose();
  }
}

/** The plan's three sorters: entries and inputs joined by key, the entries' repeat checks, the joined rows kept. */
interface AtifSorters {
  joined: ExternalSorter<KeyedRecord>;
  repeats: ExternalSorter<KeyedRecord>;
  kept: ExternalSorter<KeyedRecord>;
}

/** The run's agents and servers, numbered as the plan's records name them. */
interface AtifNames {
  agents: Names;
  servers: Names;
}

/**
 * Adds the inputs and the manifest's entries, joins them one-to-one into `kept`, and checks the
 * repeats; the first problem of the inputs, then of the entries, stops the run.
 */
async function joinChecked(
  req: AtifPlanRequest,
  { joined, repeats, kept }: AtifSorters,
  { agents, servers }: AtifNames,
  place: (line: number) => string,
  refuseAlias: AliasCheck,
): Promise<{ entries: number; unpinned: number }> {
  const inputProblem = await addAtifInputs(req.inputsPath, req.routing, joined, agents, servers);
  const problems = { entries: new FirstProblem(), inputs: new FirstProblem() };
  const counts = await addEntries(req, joined, repeats, problems.entries, refuseAlias);
  if (counts.entries === 0) throw new InputError(emptyManifest(req.manifestPath).message);
  if (inputProblem) problems.inputs.offer(inputProblem.line, 0, inputProblem.message);
  await joinEntries(joined, place, req.inputsPath, problems, async (row) => {
    await kept.add({ key: '', nums: [row.ordinal], text: joinedRowText(row) });
  });
  await findRepeats(repeats, place, problems.entries);
  for (const p of [problems.inputs, problems.entries]) if (p.message !== null) throw new InputError(p.message);
  return counts;
}

/** Writes the kept rows' plan files (no attempts: an ATIF run's sidecar is new); returns counts and the preflight's facts. */
async function writeKeptRows(
  paths: PlanPaths,
  kept: ExternalSorter<KeyedRecord>,
  { agents, servers }: AtifNames,
  place: (line: number) => string,
): Promise<{ rows: number; rowsPerAgent: Record<string, number>; preflight: AtifPreflightFacts }> {
  const writer = await PlanFilesWriter.create(paths, ATIF_PLAN_RECORD_BYTES);
  const selected = new Set<string>();
  const calling: string[] = [];
  let unroutable: string | null = null;
  const rowsPerAgent: Record<string, number> = {};
  try {
    for await (const r of kept.sorted()) {
      const row = joinedRowOf(r.text!);
      await writer.add(row.record, NO_ATTEMPTS);
      const agent = agents.list[row.record.agent];
      rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
      if (row.unroutable !== null) unroutable ??= `${place(row.record.sourceLine)}: ${row.unroutable}`;
      if (row.unroutable !== null) continue;
      const server = servers.list[row.record.server];
      selected.add(server);
      if (row.functionCalls && !calling.includes(server)) calling.push(server);
    }
  } finally {
    await writer.close();
  }
  const preflight = { servers: [...selected].sort(compareCodePoints), functionCallServers: calling, unroutable };
  return { rows: writer.count, rowsPerAgent, preflight };
}

/** The manifest's and the inputs' identities, checked unchanged since `before` (the plan's start). */
async function unchangedSince(
  req: AtifPlanRequest,
  before: Record<'manifest' | 'inputs', Awaited<ReturnType<typeof fileNow>>>,
): Promise<FileIdentity[]> {
  const files: FileIdentity[] = [
    { path: req.manifestPath, ...before.manifest! },
    { path: req.inputsPath, ...before.inputs! },
  ];
  for (const f of files) {
    if (!sameStamp(f, await fileNow(f.path))) {
      throw new InputError(
        `'${f.path}' changed while the run was planning: wait until whatever writes it has finished, then run the same command again`,
      );
    }
  }
  return files;
}

/**
 * Streams the manifest: every line is validated (a bad line stops the run at once); the entries
 * within `--limit` have their trajectories checked, up to the first that has a problem (offered,
 * with the entries' keys, files, contents and identities, to the one-to-one checks).
 */
async function addEntries(
  req: AtifPlanRequest,
  joined: ExternalSorter<KeyedRecord>,
  repeats: ExternalSorter<KeyedRecord>,
  problems: FirstProblem,
  refuseAlias: AliasCheck,
): Promise<{ entries: number; unpinned: number }> {
  let entries = 0;
  let unpinned = 0;
  let stopped = false;
  for await (const line of jsonlLines(req.manifestPath, 0, { digests: true })) {
    if (isBlank(line.text)) continue;
    let entry;
    try {
      if (!line.utf8)
        throw new AtifProjectionError(`invalid ATIF manifest row ${line.lineNo} in ${req.manifestPath}: the line is not valid UTF-8`);
      entry = parseManifestLine(line.text, line.lineNo, req.manifestPath);
    } catch (err) {
      if (err instanceof AtifProjectionError) throw new InputError(err.message);
      throw err;
    }
    const ordinal = entries++;
    if (entry.expectedSha256 === null) unpinned++;
    if (stopped || (req.limit !== null && ordinal >= req.limit)) continue;
    const key = keyId({ task: entry.task, rollout: entry.rollout });
    const facts = await checkEntry(req.manifestPath, entry, refuseAlias(`the trajectory of ${req.manifestPath}:${line.lineNo}`));
    if ('rank' in facts) {
      problems.offer(ordinal, facts.rank, `${req.manifestPath}:${line.lineNo}: ${facts.message}`);
      stopped = true; // 0.7.0 stops at this entry: later ones are not read
      await joined.add({
        key,
        nums: encode.entry({ ordinal, ...linePlace(line), trajectory: null }),
        text: trajectoryFile(req.manifestPath, entry.trajectoryPath),
      });
      continue;
    }
    const trajectory = { length: facts.length, digest: facts.digest, calls: facts.functionCalls };
    await joined.add({ key, nums: encode.entry({ ordinal, ...linePlace(line), trajectory }), text: facts.id.real });
    await repeats.add({ key: `p${facts.id.real}`, nums: [ordinal, Rank.RepeatedPath, line.lineNo], text: null });
    await repeats.add({ key: `c${facts.sha256}`, nums: [ordinal, Rank.RepeatedContent, line.lineNo], text: null });
    await repeats.add({ key: `i${facts.identity}`, nums: [ordinal, Rank.RepeatedIdentity, line.lineNo], text: null });
  }
  return { entries, unpinned };
}
