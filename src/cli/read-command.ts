/**
 * `reverify read -o OUT [--disposition success|failure|omitted|unknown] [--json]`: the selected
 * outcomes of a run (newer NeMo Gym's `RolloutStore.read` / `selected`), as JSONL on stdout, the
 * rows verbatim; without locking or writing anything beside the run. Then, on stderr, the counts
 * and whether a plain JSONL reader may read the files unfiltered (`raw_outcomes_are_selected`):
 * a line, or with --json one JSON object. Needs no Temporal server. A managed run (a manifest or
 * attempts journal beside OUT) is refused: its selection follows the manifest, not read here.
 */
import { once } from 'node:events';
import { stat } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';
import { sidecarPath } from '../contract/file-names.js';
import { DISPOSITIONS, type Disposition } from '../contract/outcome-selection.js';
import { exists } from '../io/file-exists.js';
import { readSelectedOutcomes, type SelectionSummary } from '../io/selected-outcomes.js';
import { managedCompanion, refuseRunTagged } from '../run-checks/managed-runs.js';

export interface ReadOptions {
  output: string;
  disposition?: string;
  json?: boolean;
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

/** The stderr summary line: it names only files that exist, and why a plain reader may not read them. */
export function summaryLine(output: string, s: SelectionSummary): string {
  const c = s.counts;
  const counts = `${c.success} success, ${c.failure} failure, ${c.omitted} omitted, ${c.unknown} unknown`;
  if (s.rawOutcomesAreSelected)
    return `Selected outcomes of ${output}: ${counts}. raw_outcomes_are_selected: true: a plain JSONL reader may read ${s.files.join(' and ')} unfiltered.`;
  const why = [
    ...(s.superseded > 0 ? [`${s.superseded} superseded row(s)`] : []),
    ...s.cutOff.map((f) => `the last line of ${f} is cut off (an interrupted write; \`reverify run --resume\` repairs it)`),
  ];
  return `Selected outcomes of ${output}: ${counts}. raw_outcomes_are_selected: false: ${why.join('; ')}; read the selected outcomes with \`reverify read\`, not the raw files.`;
}

export async function readCommand(opts: ReadOptions, io: ReadIo = stdoutIo): Promise<SelectionSummary> {
  const want = wanted(opts.disposition);
  const output = opts.output;
  const sidecar = sidecarPath(output);
  const companion = await managedCompanion(output);
  if (companion !== null)
    throw new ConfigError(
      `${output} belongs to a NeMo Gym managed run (${companion}): its selected outcomes follow the manifest, which reverify does not read; read it with NeMo Gym's RolloutStore.read`,
    );
  if (!(await exists(output))) throw new ConfigError(`no run output at '${output}': pass the --output of a finished or running run`);
  if ((await stat(output)).isDirectory()) throw new ConfigError(`--output '${output}' is a directory: pass the --output file of a run`);
  await refuseRunTagged(output);
  const summary = await readSelectedOutcomes({ output, sidecar }, want, io.row);
  if (opts.json)
    io.err(
      JSON.stringify({
        output,
        sidecar,
        disposition: opts.disposition ?? null,
        counts: summary.counts,
        superseded: summary.superseded,
        raw_outcomes_are_selected: summary.rawOutcomesAreSelected,
        cut_off: summary.cutOff,
      }),
    );
  else io.err(summaryLine(output, summary));
  return summary;
}
