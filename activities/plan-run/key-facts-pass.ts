/**
 * The plan's first pass: the facts about keys, read before the source (errors in these files come
 * first, in this order) — the materialized inputs, the output's keys, --rollouts' keys (recovery)
 * and the sidecar's attempts (unless --overwrite deletes it) — each added to the key join's sort.
 */
import { keyId, keyOf } from '../../src/contract/row-key.js';
import type { ExternalSorter } from '../../src/io/external-sort.js';
import { chunkLine, isBlank, jsonlLines } from '../../src/io/jsonl-lines.js';
import type { ContentDigest } from '../../src/io/content-digest.js';
import { lineDigestHalves } from '../../src/io/line-digest.js';
import { scannedReads } from '../../src/io/scan-ahead.js';
import { FastInputRows } from '../../src/planning/fast-rows.js';
import { routeInputRow } from '../../src/planning/input-route.js';
import { encode, linePlace } from '../../src/planning/key-facts.js';
import type { KeyedRecord } from '../../src/planning/keyed-records.js';
import type { Names } from '../../src/planning/names.js';
import { outputKeyIds, sidecarAttemptLines } from '../../src/planning/output-cache.js';
import { parseLine, PLAN_SCAN } from './plan-lines.js';
import type { PlanRequest } from './plan-into.js';

/** The agents and resources servers the plan names, interned. */
export interface PlanNames {
  agents: Names;
  servers: Names;
}

/** Every materialized input row, as an `Input` fact; each line's digest also goes to `identity`. */
async function addInputs(
  req: PlanRequest,
  sorter: ExternalSorter<KeyedRecord>,
  { agents, servers }: PlanNames,
  identity: ContentDigest,
): Promise<void> {
  // Each line is checked by the scanner (fast-rows.ts); a line it does not vouch for takes the full path.
  const fast = new FastInputRows(req.routing, agents, servers);
  const reads = scannedReads(req.inputsPath, FastInputRows.names, { ...PLAN_SCAN, minBytes: req.scanAheadMinBytes });
  const mine = new Uint32Array(2); // a digest's halves, when this thread scanned the line
  for await (const { chunk, read: scanned } of reads) {
    const { data } = chunk;
    for (let k = 0; k < chunk.count; k++) {
      const start = chunk.start[k];
      const end = chunk.end[k];
      const ok = fast.read(data, start, end, scanned, k);
      let record: KeyedRecord;
      if (ok !== null) {
        const halves = scanned ? scanned.digests : mine;
        const at = scanned ? 2 * k : 0;
        if (!scanned) lineDigestHalves(data.subarray(start, end), mine, 0);
        identity.addHalves(halves[at], halves[at + 1]);
        const line = chunk.firstLineNo + k;
        const nums = encode.inputAt(line, chunk.offset + start, end - start, ok.agent, ok.server, halves[at], halves[at + 1]);
        record = { key: ok.key, nums, text: null };
      } else {
        const line = chunkLine(chunk, k, true);
        if (isBlank(line.text)) continue;
        identity.add(line.digest);
        const row = parseLine(req.inputsPath, line);
        const { agent, server } = routeInputRow(row, line.text, req.routing, `${req.inputsPath}:${line.lineNo}`);
        const nums = encode.input({ ...linePlace(line), agent: agents.id(agent), server: servers.id(server) });
        record = { key: keyId(keyOf(row)!), nums, text: null };
      }
      const adding = sorter.add(record);
      if (adding) await adding;
    }
  }
}

/** Adds every fact about keys that is not a source row to `sorter`; the inputs' lines are digested into `identity`. */
export async function addKeyFacts(
  req: PlanRequest,
  sorter: ExternalSorter<KeyedRecord>,
  names: PlanNames,
  identity: ContentDigest,
): Promise<void> {
  await addInputs(req, sorter, names, identity);
  // The output's keys: recovery's present-set (§4.6.3) unless the outputs are cleared, and
  // --resume's done keys (§4.8; --resume never clears).
  if (req.resume || (req.judgeFailedOnly && !req.outputsCleared)) {
    for await (const id of outputKeyIds(req.outputs.output, req)) await sorter.add({ key: id, nums: encode.output(), text: null });
  }
  // Recovery: every keyed line of --rollouts is present once seeded. Malformed lines stop the run,
  // since seeding would copy them verbatim.
  if (req.judgeFailedOnly) {
    for await (const line of jsonlLines(req.rolloutsPath)) {
      if (isBlank(line.text)) continue;
      const key = keyOf(parseLine(req.rolloutsPath, line));
      if (key) await sorter.add({ key: keyId(key), nums: encode.rollouts(), text: null });
    }
  }
  // The sidecar's attempts: --resume's skips (§4.8), and every planned row's attempts so far, which
  // the re-judgment rounds carry on (src/planning/plan-attempts.ts). Only a sidecar the run keeps has
  // any: without --resume or --append it is new, or deleted by --overwrite.
  if (!req.outputsCleared) {
    for await (const a of sidecarAttemptLines(req.outputs.sidecar, req)) {
      await sorter.add({ key: a.id, nums: encode.sidecar(a.terminal), text: null });
    }
  }
}
