/** `--input-format` and `--atif-manifest`: every flag combination NeMo Gym 0.7.0 refuses, with its text, in its order. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import { mcpExposure } from '../../src/config/mcp-exposure.js';
import { loadGymConfigs, type GymConfig } from '../../src/config/gym-config.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uploadSpecOf } from '../../src/cli/build-spec.js';
import { tempDir } from '../helpers/temp-dirs.js';

const gym = { inputs: 'in.jsonl', rollouts: 'ro.jsonl', output: 'out.jsonl' };
const atif = { inputs: 'in.jsonl', atifManifest: 'm.jsonl', output: 'out.jsonl', inputFormat: 'atif' };

function refusal(raw: Record<string, unknown>): string {
  try {
    parseRunOptions(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('input format options', () => {
  it('gym is the default; atif takes a manifest and no rollouts', () => {
    expect(parseRunOptions(gym).inputFormat).toBe('gym');
    const o = parseRunOptions(atif);
    expect([o.inputFormat, o.atifManifest, o.rollouts]).toEqual(['atif', 'm.jsonl', undefined]);
  });

  it.each([
    [
      'gym without --rollouts',
      { ...gym, rollouts: undefined },
      'native Gym reverification requires `rollouts_jsonl_fpath` (pass --rollouts).',
    ],
    ['gym with a manifest', { ...gym, atifManifest: 'm.jsonl' }, '`atif_manifest_jsonl_fpath` is only valid with input_format=atif.'],
    [
      'atif without a manifest',
      { ...atif, atifManifest: undefined },
      'ATIF reverification requires `atif_manifest_jsonl_fpath` (pass --atif-manifest).',
    ],
    ['atif with --rollouts', { ...atif, rollouts: 'ro.jsonl' }, '`rollouts_jsonl_fpath` cannot be combined with input_format=atif.'],
    [
      'atif with --judge-failed-only',
      { ...atif, judgeFailedOnly: true },
      'ATIF reverification does not support judge-failure recovery or append mode.',
    ],
    [
      'atif with --judge-failed-only --append',
      { ...atif, judgeFailedOnly: true, append: true },
      'ATIF reverification does not support judge-failure recovery or append mode.',
    ],
    ['atif with --force', { ...atif, force: true }, 'ATIF reverification requires a stateless verifier; --force is not supported.'],
    [
      'atif with --resume',
      { ...atif, resume: true },
      'ATIF reverification does not support --resume until cache keys include source hashes.',
    ],
    // 0.7.0 checks --append first, whatever the format.
    [
      'atif with --append alone',
      { ...atif, append: true },
      '`append` is only valid together with `judge_failed_only` (pass --judge-failed-only).',
    ],
    [
      'atif with --rollouts and --force',
      { ...atif, rollouts: 'r', force: true },
      '`rollouts_jsonl_fpath` cannot be combined with input_format=atif.',
    ],
    [
      'atif with --force and --resume',
      { ...atif, force: true, resume: true },
      'ATIF reverification requires a stateless verifier; --force is not supported.',
    ],
  ])('%s is refused', (_, raw, message) => {
    expect(refusal(raw)).toBe(message);
  });

  it('an unknown format is refused naming the flag', () => {
    expect(refusal({ ...atif, inputFormat: 'jsonl' })).toContain('--input-format');
  });
});

describe('the exported config names the input options as NeMo Gym does', () => {
  it('input_format and atif_manifest_jsonl_fpath, beside the other keys', async () => {
    const config = join(tempDir(), 'c.yaml');
    writeFileSync(config, 'mlflow_tracking_uri: http://x\nmlflow_experiment_name: e\nmlflow_run_name: r\n');
    const spec = uploadSpecOf({ ...parseRunOptions({ ...atif, configs: [config] }), upload: true }, await loadGymConfigs([config]));
    expect(spec?.options).toMatchObject({
      input_format: 'atif',
      atif_manifest_jsonl_fpath: 'm.jsonl',
      materialized_inputs_jsonl_fpath: 'in.jsonl',
      output_jsonl_fpath: 'out.jsonl',
    });
    expect(spec?.options).not.toHaveProperty('rollouts_jsonl_fpath');
  });
});

describe('MCP exposure from the config (expose_tools_over_mcp)', () => {
  const config = (rs: unknown): GymConfig => ({ data: { rs }, origins: {} });
  const impl = (extra: Record<string, unknown>) => config({ resources_servers: { mcqa: { host: 'h', port: 1, ...extra } } });

  it('reads the flag of the single implementation with pydantic bool rules', () => {
    expect(mcpExposure(impl({}), 'rs')).toBe(false);
    expect(mcpExposure(impl({ expose_tools_over_mcp: true }), 'rs')).toBe(true);
    expect(mcpExposure(impl({ expose_tools_over_mcp: 'Yes' }), 'rs')).toBe(true);
    expect(mcpExposure(impl({ expose_tools_over_mcp: 0 }), 'rs')).toBe(false);
  });

  it.each([
    [config({ resources_servers: { a: {}, b: {} } }), "reverify: resources server 'rs' must contain exactly one resources_servers entry."],
    [config({ resources_servers: { a: 'x' } }), "reverify: resources server 'rs' has an invalid config entry."],
    [impl({ expose_tools_over_mcp: 'maybe' }), "reverify: resources server 'rs' has an invalid expose_tools_over_mcp value."],
    [impl({ expose_tools_over_mcp: null }), "reverify: resources server 'rs' has an invalid expose_tools_over_mcp value."],
    [null, "reverify: resources server 'rs' is missing from the config."],
  ])('a config problem is kept as its message (%#)', (cfg, message) => {
    expect(mcpExposure(cfg, 'rs')).toBe(message);
  });
});
