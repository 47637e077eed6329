/** The option table of `reverify run` in docs/usage.md is the declared flags (src/config/run-flags.ts), row for row. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { runOptions, toRaw } from '../../src/cli/run-flag-options.js';
import { gymOverrideHint } from '../../src/config/gym-overrides.js';
import { optionTableMarkdown } from '../../src/config/run-flags.js';
import { projectRoot } from '../helpers/worker-process.js';

describe('docs/usage.md option table', () => {
  it('equals the table generated from the flag declarations', () => {
    const page = readFileSync(join(projectRoot, 'docs', 'usage.md'), 'utf8');
    const start = page.indexOf('| option | meaning | default |');
    expect(start).toBeGreaterThan(0);
    const end = page.indexOf('\n\n', start);
    expect(page.slice(start, end)).toBe(optionTableMarkdown());
  });
});

describe('policies saved with the run on the command line', () => {
  const required = ['--inputs', 'i.jsonl', '-o', 'o.jsonl'];
  const parsed = (...argv: string[]) =>
    toRaw(
      runOptions(new Command())
        .parse([...required, ...argv], { from: 'user' })
        .opts(),
    );

  it('are true, false (their --no- form) or absent (a resume keeps the saved one)', () => {
    expect(parsed('--retry-terminal-timeouts').retryTerminalTimeouts).toBe(true);
    expect(parsed('--no-retry-terminal-timeouts').retryTerminalTimeouts).toBe(false);
    expect(parsed()).toMatchObject({
      retryTerminalTimeouts: undefined,
      dispatchLongestFirst: undefined,
      retryInvalidJudgeResponses: false,
    });
    expect(parsed('--dispatch-longest-first').dispatchLongestFirst).toBe(true);
    expect(parsed('--no-dispatch-longest-first').dispatchLongestFirst).toBe(false);
  });

  it("NeMo Gym's override names the flag that sets it either way", () => {
    expect(gymOverrideHint('++retry_terminal_timeouts=false')).toBe(
      'reverify takes flags, not Hydra overrides: pass --no-retry-terminal-timeouts instead of ++retry_terminal_timeouts=false.',
    );
    expect(gymOverrideHint('++retry_terminal_timeouts=true')).toBe(
      'reverify takes flags, not Hydra overrides: pass --retry-terminal-timeouts instead of ++retry_terminal_timeouts=true.',
    );
  });
});
