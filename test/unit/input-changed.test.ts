import { describe, expect, it } from 'vitest';
import { inputChanged } from '../../src/contract/input-changed.js';

describe('inputChanged: the way on is a command the run accepts', () => {
  it('a plain run: --resume', () => {
    const line = inputChanged('/d/rollouts.jsonl', 'line 3', undefined, null);
    expect(line).toContain('run the same command with --resume');
  });

  it('an ATIF run, which refuses --resume: --overwrite', () => {
    const line = inputChanged('/d/t.json', 'the trajectory of /d/m.jsonl:3', undefined, null, true);
    expect(line).toContain('run the same command with --overwrite (an ATIF run cannot be resumed)');
    expect(line).not.toContain('--resume');
  });
});
