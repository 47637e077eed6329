/** What `reverify` says about itself and about arguments meant for NeMo Gym: run as a user runs it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_FLAG_LIST } from '../../src/config/run-flags.js';
import { runCli } from '../helpers/cli-process.js';
import { projectRoot } from '../helpers/worker-process.js';

describe('reverify about itself', () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version'], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it('Gym-style ++key=value arguments get one line each naming the matching flag, before anything runs', async () => {
    const r = await runCli(
      [
        'run',
        '++resume_from_cache=true',
        '+num_samples_in_parallel=8',
        '++force=false',
        '++input_format=atif',
        '++atif_manifest_jsonl_fpath=m.jsonl',
        '++frobnicate=1',
      ],
      {},
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      'reverify takes flags, not Hydra overrides: pass --resume instead of ++resume_from_cache=true.',
      'reverify takes flags, not Hydra overrides: pass --concurrency 8 instead of +num_samples_in_parallel=8.',
      'reverify takes flags, not Hydra overrides: leave out ++force=false (--force is off by default).',
      'reverify takes flags, not Hydra overrides: pass --input-format atif instead of ++input_format=atif.',
      'reverify takes flags, not Hydra overrides: pass --atif-manifest m.jsonl instead of ++atif_manifest_jsonl_fpath=m.jsonl.',
      "reverify takes flags, not Hydra overrides: '++frobnicate=1' has no matching flag; see `reverify run --help`.",
    ]);
  });

  it('a flag typo: the error, the suggestion and one line naming the help (not the whole help)', async () => {
    const r = await runCli(['run', '--inputs', 'a', '--rollouts', 'b', '-o', 'c', '--concurency', '4'], {});
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      "error: unknown option '--concurency'",
      '(Did you mean --concurrency?)',
      '(`reverify run --help` lists the options)',
    ]);
    const cmd = await runCli(['server', 'stat'], {});
    expect(cmd.code).toBe(1);
    expect(cmd.stderr.trim().split('\n')).toEqual([
      "error: unknown command 'stat'",
      '(Did you mean start?)',
      '(`reverify server --help` lists the commands)',
    ]);
  });

  it('run --help shows every declared flag with its default', async () => {
    const r = await runCli(['run', '--help'], {});
    expect(r.code).toBe(0);
    const help = r.stdout.replace(/\s+/g, ' ');
    for (const f of RUN_FLAG_LIST) {
      const long = f.usage.split(/[ ,]+/).find((w) => w.startsWith('--'))!;
      expect(help).toContain(long);
      const shown = f.shownDefault.replace(/`/g, '');
      if (f.kind === 'int' || f.kind === 'seconds') expect(help).toContain(`default${f.initial === undefined ? '' : ':'} ${shown})`);
    }
  });
});
