/**
 * `reverify run … --resume --rejudge-saved KEYS --dry-run`: the run store's `check_rejudgment` for
 * saved results, before anything runs. It starts no run and calls no judge: it reads the output and
 * `--inputs`, says which saved row each key would settle (`file:line`), and fails with one line
 * naming the first key that cannot settle (no saved row, a failure row or one without a saved
 * answer, no input row to build its `/verify` body from).
 */
import { existsSync, statSync } from 'node:fs';
import { ConfigError } from '../contract/errors.js';
import { parseRunOptions } from '../config/run-options.js';
import { scanSavedRows } from '../planning/saved-selection.js';
import { keyIdText } from '../planning/selected-rows.js';
import { buildRun } from './build-spec.js';

/** Rows listed one by one at most. */
const LISTED = 20;

/** Checks the selection and prints what would settle; throws the first key that cannot. */
export async function rejudgeSavedCheck(raw: unknown, out: (line: string) => void): Promise<void> {
  const opts = parseRunOptions(raw);
  const { spec } = await buildRun(opts, { heartbeatTimeoutMs: 30_000, maxAttempts: 1 });
  const output = spec.outputPath;
  if (!existsSync(output)) throw new ConfigError(`--rejudge-saved: ${output} does not exist: there is no saved row to settle`);
  const scan = await scanSavedRows({
    output,
    from: 0,
    to: statSync(output).size,
    inputsPath: spec.inputsPath,
    routing: spec.routing,
    selection: { kind: 'keys', keys: spec.rejudgeSaved!.keys },
  });
  const more = (n: number) => (n > 1 ? ` (and ${n - 1} more)` : '');
  const missing = scan.selector.missing();
  if (missing.length > 0)
    throw new ConfigError(
      `--rejudge-saved: cannot settle key ${keyIdText(missing[0])}: ${output} has no saved row of it${more(missing.length)}`,
    );
  const refused = scan.selector.refused();
  if (refused.length > 0)
    throw new ConfigError(
      `--rejudge-saved: cannot settle key ${keyIdText(refused[0].key)}: ${output}:${refused[0].line}: ${refused[0].problem}${more(refused.length)}`,
    );
  const noInput = scan.chosen.filter((c) => !scan.inputs.has(c.key));
  if (noInput.length > 0)
    throw new ConfigError(
      `--rejudge-saved: cannot settle key ${keyIdText(noInput[0].key)}: ${spec.inputsPath} has no row of it to build its /verify body from${more(noInput.length)}`,
    );
  for (const c of scan.chosen.slice(0, LISTED)) {
    const server = scan.servers[scan.inputs.get(c.key)!.server];
    out(
      `Would settle ${output}:${c.line}: key ${keyIdText(c.key)} (reward ${c.reward ?? 'none'} now), judged again by ${server} from its saved answer`,
    );
  }
  if (scan.chosen.length > LISTED) out(`  and ${scan.chosen.length - LISTED} more`);
  out(`Dry run: ${scan.chosen.length} saved row(s) would be re-verified and settled; nothing was started or judged`);
}
