/**
 * `reverify omit -o OUT --rollouts PATH (--keys T:R,…|--tasks T,…|--keys-file FILE) --reason TEXT
 * [--dry-run]`: the run store's `record_omission(row, reason)` for a plain run. Rollouts a user knows
 * cannot be graded (a bad reference answer, a judge that cannot grade them) are saved as
 * intentional omissions in the failures sidecar (src/planning/omission-rows.ts): `--resume` never
 * sends them, no aggregate counts them, and the coverage counts them as intentionally omitted. Under
 * the run lock, refused while any run writes the output; appended exactly once
 * (src/io/omission-append.ts). Then the coverage file is counted again and the omitted rollouts
 * leave `<stem>_unstarted.jsonl`. Needs no Temporal server.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { manifestPath, sidecarPath, unstartedPath } from '../contract/file-names.js';
import { rawPartId } from '../contract/row-key.js';
import { writeCoverageFile } from '../io/coverage-file.js';
import { appendOmissions, finishOmission } from '../io/omission-append.js';
import { RunLockHeldError, withOwnRunLock } from '../io/run-lock.js';
import { omissionRows, type OmitChoice } from '../planning/omission-rows.js';
import { dropUnstarted } from '../planning/unstarted-rows.js';
import { coverageNow } from './coverage-view.js';
import { rejudgeSavedKeys } from './rejudge-saved-keys.js';

export interface OmitOptions {
  output: string;
  rollouts: string;
  keys?: string;
  tasks?: string;
  keysFile?: string;
  reason: string;
  dryRun?: boolean;
}

async function choiceOf(o: OmitOptions): Promise<OmitChoice> {
  const given = [o.keys, o.tasks, o.keysFile].filter((v) => v !== undefined).length;
  if (given !== 1) throw new ConfigError('omit: name the rollouts with exactly one of --keys T:R,…, --tasks T,… or --keys-file FILE');
  if (o.tasks !== undefined)
    return {
      tasks: o.tasks.split(',').map((t) => {
        const id = /^\s*-?\d+\s*$/.test(t) ? rawPartId(t) : null;
        if (id === null) throw new ConfigError(`omit: --tasks: '${t.trim()}' is not a task index: write integers, comma-separated`);
        return id;
      }),
    };
  if (o.keysFile !== undefined && !existsSync(o.keysFile))
    throw new ConfigError(`omit: --keys-file ${o.keysFile} does not exist: give a file of TASK:ROLLOUT lines or JSONL rows`);
  const keys = await rejudgeSavedKeys((o.keys ?? o.keysFile)!, o.keys !== undefined ? '--keys' : '--keys-file');
  if (keys === 'all') throw new ConfigError("omit: 'all' is not a key: name the rollouts to omit (TASK:ROLLOUT)");
  return { keys };
}

/** The coverage file counted again from the files; what the run saved beside the counts is kept. */
async function recountCoverage(output: string): Promise<void> {
  const now = await coverageNow(output);
  if (now === null) return;
  const saved = JSON.parse(await readFile(now.file, 'utf8')) as Record<string, unknown>;
  await writeCoverageFile(now.file, { ...saved, ...now.coverage });
}

function refuseLive(output: string, err: unknown): never {
  if (err instanceof RunLockHeldError)
    throw new ConfigError(
      `omit: a run is writing ${output} (its run lock is held): wait for it to end, or cancel it (reverify cancel -o ${output}), then omit`,
    );
  throw err;
}

/** Keys named one by one at most. */
const LISTED = 20;

function listed(keys: string[]): string {
  return keys.slice(0, LISTED).join(', ') + (keys.length > LISTED ? ` and ${keys.length - LISTED} more` : '');
}

export async function omitCommand(o: OmitOptions, out: (line: string) => void): Promise<void> {
  const output = resolve(o.output);
  const sidecar = sidecarPath(output);
  if (o.reason.trim() === '')
    throw new ConfigError('omit: --reason is empty: say why these rollouts are left out (a later reader sees it)');
  if (!existsSync(output))
    throw new ConfigError(`omit: ${output} does not exist: omit rollouts of a run that has started (-o is its --output)`);
  if (existsSync(manifestPath(output)))
    throw new ConfigError(
      `omit: ${output} is a NeMo Gym managed run (it has ${manifestPath(output)}): its omissions are NeMo Gym's to write`,
    );
  const req = { rollouts: o.rollouts, output, sidecar, choice: await choiceOf(o), reason: o.reason };
  if (o.dryRun === true) {
    const rows = await omissionRows(req);
    out(`Dry run: would omit ${rows.keys.length} rollout(s) of ${output}: ${listed(rows.keys)}; nothing was written`);
    return;
  }
  await withOwnRunLock(output, async () => {
    const finished = await finishOmission(output, sidecar);
    if (finished === null) out(`An interrupted 'reverify omit' was given up: ${sidecar} changed since; check its omission rows`);
    else if (finished.length > 0) out(`Finished an interrupted 'reverify omit': ${finished.length} omission row(s) in ${sidecar}`);
    const done = finished ?? [];
    const rows = await omissionRows({ ...req, finished: new Set(done) });
    if (rows.ids.length > 0) await appendOmissions(output, sidecar, rows.text);
    await dropUnstarted(unstartedPath(output), new Set([...rows.ids, ...done]));
    await recountCoverage(output);
    if (rows.ids.length > 0)
      out(
        `Omitted ${rows.keys.length} rollout(s) of ${output} on purpose: ${listed(rows.keys)}; ` +
          `saved in ${sidecar} with the reason: --resume never sends them, the coverage counts them as intentionally omitted`,
      );
  }).catch((err: unknown) => refuseLive(output, err));
}
