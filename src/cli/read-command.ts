/**
 * `reverify read -o OUT [--disposition d] [--records] [--skip-keys k,…] [--retry-terminal-timeouts]
 * [--no-import-legacy] [--artifacts f,…] [--json]`: the selected outcomes of a run (newer NeMo
 * Gym's `RolloutStore.read` then `selected`, or with --records `selected_records`: identity,
 * attempt, file, line and byte slice, no row contents), as JSONL on stdout; without locking or
 * writing anything beside the run. A NeMo Gym managed run is read through its manifest
 * (src/io/run-selection.ts). Then, on stderr, the counts and whether a plain JSONL reader may read
 * the files (or only --artifacts) unfiltered (`raw_outcomes_are_selected`): a line, or with --json
 * one JSON object. Needs no Temporal server.
 */
import { once } from 'node:events';
import { setFields } from '../contract/json-spans.js';
import { ConfigError } from '../contract/errors.js';
import { sidecarPath } from '../contract/file-names.js';
import { DISPOSITIONS, type Disposition } from '../contract/outcome-selection.js';
import type { SelectedOutcome } from '../io/managed-read.js';
import { readRunSelection } from '../io/run-selection.js';
import type { SelectionSummary } from '../io/selection-summary.js';

export interface ReadOptions {
  output: string;
  disposition?: string;
  json?: boolean;
  records?: boolean;
  skipKeys?: string;
  retryTerminalTimeouts?: boolean;
  /** Commander's `--no-import-legacy`: false when given. */
  importLegacy?: boolean;
  artifacts?: string;
}

export interface ReadIo {
  /** One JSONL row to stdout; resolves when it may write again (back-pressure). */
  row: (line: string) => void | Promise<void>;
  err: (line: string) => void;
}

const stdoutIo: ReadIo = {
  row: async (line) => {
    if (!process.stdout.write(line + '\n')) await once(process.stdout, 'drain');
  },
  err: (line) => process.stderr.write(line + '\n'),
};

function wanted(disposition: string | undefined): Set<Disposition> {
  if (disposition === undefined) return new Set(DISPOSITIONS);
  if (!(DISPOSITIONS as readonly string[]).includes(disposition))
    throw new ConfigError(`--disposition must be one of ${DISPOSITIONS.join(', ')}, got '${disposition}'`);
  return new Set([disposition as Disposition]);
}

const listOf = (text: string | undefined): string[] | undefined =>
  text === undefined
    ? undefined
    : text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

/** The stderr summary line: it names only files that exist, and why a plain reader may not read them. */
export function summaryLine(output: string, s: SelectionSummary): string {
  const c = s.counts;
  const never = s.managed ? `, ${s.managed.neverDispatched} never dispatched` : '';
  const counts = `${c.success} success, ${c.failure} failure, ${c.omitted} omitted, ${c.unknown} unknown${never}`;
  const kind = s.managed ? (s.managed.runId === null ? ' (legacy NeMo Gym run, imported)' : ` (managed run ${s.managed.runId})`) : '';
  if (s.rawOutcomesAreSelected)
    return `Selected outcomes of ${output}${kind}: ${counts}. raw_outcomes_are_selected: true: a plain JSONL reader may read ${s.files.join(' and ')} unfiltered.`;
  const why = [
    ...(s.superseded > 0 ? [`${s.superseded} superseded row(s)`] : []),
    ...s.cutOff.map((f) => `the last line of ${f} is cut off (an interrupted write; \`reverify run --resume\` repairs it)`),
  ];
  return `Selected outcomes of ${output}${kind}: ${counts}. raw_outcomes_are_selected: false: ${why.join('; ')}; read the selected outcomes with \`reverify read\`, not the raw files.`;
}

/** One stdout line: the row (without the skipped keys), or with --records its metadata. */
function lineOf(o: SelectedOutcome, skip: string[] | undefined): string {
  if (o.text === null)
    return JSON.stringify({
      rollout_id: o.identity,
      attempt: o.attempt,
      disposition: o.disposition,
      file: o.path,
      line: o.lineNo,
      offset: o.offset,
      length: o.length,
    });
  return skip === undefined || skip.length === 0 ? o.text : setFields(o.text, [], skip);
}

function jsonSummary(opts: ReadOptions, summary: SelectionSummary): string {
  return JSON.stringify({
    output: opts.output,
    sidecar: sidecarPath(opts.output),
    disposition: opts.disposition ?? null,
    counts: summary.counts,
    superseded: summary.superseded,
    raw_outcomes_are_selected: summary.rawOutcomesAreSelected,
    cut_off: summary.cutOff,
    terminal_failures: summary.terminalFailures,
    files: summary.perFile.map((f) => ({ path: f.path, rows: f.rows, selected: f.selected, cut_off: f.cutOff })),
    managed: summary.managed
      ? {
          run_id: summary.managed.runId,
          never_dispatched: summary.managed.neverDispatched,
          legacy_import: summary.managed.legacyImport,
          retry_terminal_timeouts: summary.managed.retryTerminalTimeouts,
        }
      : null,
  });
}

export async function readCommand(opts: ReadOptions, io: ReadIo = stdoutIo): Promise<SelectionSummary> {
  const want = wanted(opts.disposition);
  const skip = listOf(opts.skipKeys);
  if (opts.records && skip !== undefined) throw new ConfigError('--skip-keys trims rows, and --records prints no rows: pass one of them');
  const req = {
    want,
    rows: opts.records !== true,
    importLegacy: opts.importLegacy !== false,
    retryTerminalTimeouts: opts.retryTerminalTimeouts === true,
    artifacts: listOf(opts.artifacts),
  };
  const summary = await readRunSelection(opts.output, req, (o) => io.row(lineOf(o, skip)));
  if (opts.retryTerminalTimeouts && summary.managed && summary.managed.runId !== null)
    io.err(
      `Note: --retry-terminal-timeouts applies to runs without a manifest; this run keeps its saved policy (${summary.managed.retryTerminalTimeouts}).`,
    );
  io.err(opts.json ? jsonSummary(opts, summary) : summaryLine(opts.output, summary));
  return summary;
}
