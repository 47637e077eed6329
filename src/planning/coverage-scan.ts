/**
 * Counts a run's coverage from its two files, key by key, in memory flat in the number of rows:
 * every keyed line of the main output and of the sidecar becomes one sorted record, and each key's
 * group is one `KeyTally` (src/contract/coverage.ts). Reads only; the sort's run files go to a
 * fresh scratch directory under `scratchParent`, removed afterwards.
 */
import { addKey, emptyCounts, type CoverageCounts, type KeyTally } from '../contract/coverage.js';
import type { RetryRules } from '../contract/run-spec.js';
import { ExternalSorter, forEachGroup } from '../io/external-sort.js';
import type { ScanOptions } from '../io/scan-ahead.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { decode, encode, Kind } from './key-facts.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from './keyed-records.js';
import { outputMeasureChunks, sidecarAttemptChunks } from './output-cache.js';
import type { Measure } from '../contract/measure.js';

const MEASURES: readonly Measure[] = ['measured', 'masked', 'unscored'];

/** Each key's tally, in key order, to `visit`; a cut-off last line (a commit in progress) is left out. */
export async function scanKeys(
  files: { output: string; sidecar: string },
  rules: RetryRules,
  scratchParent: string,
  visit: (key: string, tally: KeyTally) => void,
  opts: { maxRecords?: number; scan?: ScanOptions } = {},
): Promise<{ mainRows: number; sidecarRows: number; omissionRows: number; terminalRows: number; classes: Map<string, number> }> {
  const policy = { repairTruncated: true, retryTerminalTimeouts: rules.retryTerminalTimeouts };
  return withScratchDir(scratchParent, '.reverify-coverage-', async (dir) => {
    const sorter = new ExternalSorter<KeyedRecord>({
      dir,
      name: 'coverage-keys',
      compare: compareKeyedRecords,
      codec: keyedRecordCodec,
      maxRecords: opts.maxRecords,
    });
    // Failure rows (omissions left out) by their raw `_ng_failure_class` text (few distinct values).
    const rows = { mainRows: 0, sidecarRows: 0, omissionRows: 0, terminalRows: 0, classes: new Map<string, number>() };
    try {
      for await (const outcomes of outputMeasureChunks(files.output, policy, opts.scan))
        for (const { id, measure } of outcomes) {
          rows.mainRows++;
          const adding = sorter.add({ key: id, nums: [...encode.output(), MEASURES.indexOf(measure)], text: null });
          if (adding) await adding;
        }
      for await (const attempts of sidecarAttemptChunks(files.sidecar, policy, opts.scan))
        for (const a of attempts) {
          rows.sidecarRows++;
          if (a.omitted) rows.omissionRows++;
          else {
            if (a.terminal) rows.terminalRows++;
            rows.classes.set(a.failureClass, (rows.classes.get(a.failureClass) ?? 0) + 1);
          }
          const adding = sorter.add({ key: a.id, nums: encode.sidecar(a.terminal, a.omitted), text: null });
          if (adding) await adding;
        }
      await forEachGroup(
        sorter.sortedChunks(),
        (r) => r.key,
        (group) => {
          const t: KeyTally = { main: 0, counted: 0, terminal: false, omitted: false };
          for (const r of group) {
            if (r.nums[0] === Kind.Output) {
              t.main++;
              t.measure ??= MEASURES[r.nums[1]];
              continue;
            }
            const attempt = decode.sidecar(r.nums);
            if (attempt.terminal) t.terminal = true;
            if (attempt.omitted) t.omitted = true;
            else t.counted++;
          }
          visit(group[0].key, t);
        },
      );
      return rows;
    } finally {
      await sorter.dispose();
    }
  });
}

/** The coverage counts of a run's files under an attempt cap (`scan`: how big files are scanned, `scannedReads`). */
export async function countCoverage(
  files: { output: string; sidecar: string },
  rules: RetryRules,
  cap: number,
  scratchParent: string,
  scan: ScanOptions = {},
): Promise<CoverageCounts> {
  const c = emptyCounts();
  const rows = await scanKeys(files, rules, scratchParent, (_key, t) => addKey(c, t, cap), { scan });
  c.main_rows = rows.mainRows;
  c.sidecar_rows = rows.sidecarRows;
  c.omission_rows = rows.omissionRows;
  c.terminal_rows = rows.terminalRows;
  c.failed_attempts_by_class = failureClassTotals(rows.classes);
  return c;
}

/** Counted failure rows per class name, sorted by name (a row without a string class: `unknown`). */
function failureClassTotals(raw: Map<string, number>): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const [text, n] of raw) {
    let cls: unknown = null;
    try {
      cls = JSON.parse(text);
    } catch {
      cls = null;
    }
    const name = typeof cls === 'string' && cls !== '' ? cls : 'unknown';
    totals[name] = (totals[name] ?? 0) + n;
  }
  return Object.fromEntries(Object.entries(totals).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
