/**
 * The flags of `reverify run` that name its files (inputs, output, config, servers): the first part
 * of the one list of flags (run-flags.ts), in the order the help and docs/usage.md show them.
 */
import { INPUT_FORMATS } from '../contract/atif-messages.js';
import type { RunFlag } from './run-flag.js';

export const FILE_FLAGS: readonly RunFlag[] = [
  {
    usage: '--inputs PATH',
    gymKey: 'materialized_inputs_jsonl_fpath',
    key: 'inputs',
    kind: 'path',
    required: true,
    meaning: 'materialized inputs of the original run (`<run>_materialized_inputs.jsonl`)',
    shownDefault: 'required',
  },
  {
    usage: '--rollouts PATH',
    gymKey: 'rollouts_jsonl_fpath',
    key: 'rollouts',
    kind: 'path',
    meaning: "the rollouts to re-verify (the original run's main output)",
    shownDefault: 'required (gym format)',
  },
  {
    usage: '--input-format FORMAT',
    gymKey: 'input_format',
    key: 'inputFormat',
    kind: 'choice',
    choices: INPUT_FORMATS,
    meaning: '`gym`: NeMo Gym rollouts (`--rollouts`); `atif`: ATIF v1.7 trajectories listed by `--atif-manifest` (see "ATIF input")',
    shownDefault: 'gym',
  },
  {
    usage: '--atif-manifest PATH',
    gymKey: 'atif_manifest_jsonl_fpath',
    key: 'atifManifest',
    kind: 'path',
    meaning: 'with `--input-format atif`: JSONL joining each trajectory file to its materialized input row',
    shownDefault: 'required (atif format)',
  },
  {
    usage: '-o, --output PATH',
    gymKey: 'output_jsonl_fpath',
    key: 'output',
    kind: 'path',
    required: true,
    meaning: 'output JSONL; `<stem>_failures.jsonl` and `<stem>_aggregate_metrics.json` go next to it',
    shownDefault: 'required',
  },
  {
    usage: '--config PATH',
    key: 'configs',
    kind: 'list',
    meaning: "NeMo Gym YAML config (repeatable, merged in order): agent → resources server routing and each server's `host`/`port`",
    shownDefault: '',
  },
  {
    usage: '--server NAME=URL',
    key: 'servers',
    kind: 'list',
    meaning:
      "a resources server's URL by instance name (repeatable); overrides the config's host/port; without `--config`, one `--server` routes every agent to it. `http://user:password@host:port` (percent-encoded; also `host: user:password@host` in a config) sends HTTP Basic auth on every request to that server; the password is never printed nor stored in the workflow history. Other workers (`reverify worker`, `--no-worker`) take credentials from `REVERIFY_SERVER_AUTH`",
    shownDefault: '',
  },
];
