import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { deepMerge, loadGymConfigs, serverUrl, type GymConfig } from '../../src/config/gym-config.js';
import { escapeRegExp } from '../helpers/regexp.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/configs/${name}`, import.meta.url));

async function loadError(paths: string[]): Promise<ConfigError> {
  try {
    await loadGymConfigs(paths);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadGymConfigs', () => {
  it('reads a config and records where each top-level block is', async () => {
    const config = await loadGymConfigs([fixture('agents-two.yaml')]);
    expect(Object.keys(config.data)).toEqual(['head_server', 'rs_a', 'rs_b', 'agent_a', 'agent_b', 'policy_model']);
    expect(config.origins.rs_a).toBe(`${fixture('agents-two.yaml')}:5`);
  });

  it('deep-merges files in order, later wins', async () => {
    const config = await loadGymConfigs([fixture('agents-two.yaml'), fixture('ports-override.yaml')]);
    expect(serverUrl(config, 'rs_a')).toBe('http://127.0.0.1:9101');
    const impl = ((config.data.rs_a as Record<string, unknown>).resources_servers as Record<string, Record<string, unknown>>).mcqa;
    expect(impl.entrypoint).toBe('app.py');
    expect(config.data.extra_setting).toBe(true);
    expect(config.origins.rs_a).toBe(`${fixture('ports-override.yaml')}:2`);
    expect(config.origins.rs_b).toBe(`${fixture('agents-two.yaml')}:11`);
  });

  it('no files and an empty file give an empty config', async () => {
    expect((await loadGymConfigs([])).data).toEqual({});
    expect((await loadGymConfigs([fixture('empty.yaml')])).data).toEqual({});
  });

  it('a YAML error names file:line', async () => {
    const err = await loadError([fixture('invalid-yaml.yaml')]);
    expect(err.message).toMatch(new RegExp(`^${escapeRegExp(fixture('invalid-yaml.yaml'))}:5: invalid YAML: `));
    expect(err.message).not.toContain('\n');
  });

  it('a missing file is a ConfigError naming it', async () => {
    const err = await loadError([fixture('agents-two.yaml'), fixture('nope.yaml')]);
    expect(err.message).toBe(`config file not found: ${fixture('nope.yaml')} (check the --config path)`);
  });

  it('a directory is a ConfigError naming it, not a raw EISDIR', async () => {
    const dir = fixture('');
    const err = await loadError([dir]);
    expect(err.message).toBe(`--config '${dir}' is a directory: pass a NeMo Gym YAML config file`);
  });

  it('a top level that is not a mapping is a ConfigError', async () => {
    const err = await loadError([fixture('top-level-list.yaml')]);
    expect(err.message).toContain('a NeMo Gym config must be a mapping of server instance names to blocks, got a list');
  });
});

describe('deepMerge', () => {
  it('merges mappings key by key; lists and scalars replace', () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: { e: 1 } })).toEqual({ a: { b: 1, c: [3] }, d: { e: 1 } });
  });
});

describe('serverUrl (§2.0)', () => {
  const config = (data: Record<string, unknown>): GymConfig => ({ data, origins: {} });

  it('uses the first implementation of the first server type', async () => {
    const c = await loadGymConfigs([fixture('agents-two.yaml')]);
    expect(serverUrl(c, 'rs_a')).toBe('http://127.0.0.1:8001');
    expect(serverUrl(c, 'policy_model')).toBe('http://127.0.0.1:9000');
  });

  it('0.0.0.0 is reached as 127.0.0.1', async () => {
    const c = await loadGymConfigs([fixture('resources-only.yaml')]);
    expect(serverUrl(c, 'verifier_block')).toBe('http://127.0.0.1:8001');
  });

  it('reserved keys and blocks without host/port have no URL', async () => {
    const c = await loadGymConfigs([fixture('agents-two.yaml')]);
    expect(serverUrl(c, 'head_server')).toBeNull();
    expect(serverUrl(c, 'agent_a')).toBeNull();
    expect(serverUrl(c, 'missing')).toBeNull();
  });

  it('unresolved interpolations, bad ports and IPv6 hosts', async () => {
    expect(serverUrl(await loadGymConfigs([fixture('interpolated-host.yaml')]), 'rs_env')).toBeNull();
    expect(serverUrl(config({ r: { resources_servers: { x: { host: 'h', port: 70000 } } } }), 'r')).toBeNull();
    expect(serverUrl(config({ r: { resources_servers: { x: { host: 'h', port: '8080' } } } }), 'r')).toBe('http://h:8080');
    expect(serverUrl(config({ r: { resources_servers: { x: { host: '::1', port: 1 } } } }), 'r')).toBe('http://[::1]:1');
  });
});
