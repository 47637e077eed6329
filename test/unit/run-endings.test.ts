/** The command `reverify run` prints for computing a run's metrics later: shell-quoted, glob-literal, no password. */
import { describe, expect, it } from 'vitest';
import { aggregateCommandLine, globLiteral, shellQuote } from '../../src/cli/run-endings.js';
import { hasMagic } from '../../src/aggregation/shard-glob.js';

describe('aggregateCommandLine', () => {
  it("names the output as input and output with --no-merge, and the run's own routing flags (configs absolute)", () => {
    expect(aggregateCommandLine('/d/out.jsonl', ['/c/gym.yaml'], ['rs=http://127.0.0.1:8000'])).toBe(
      "reverify aggregate -i '/d/out.jsonl' -o '/d/out.jsonl' --no-merge --config '/c/gym.yaml' --server 'rs=http://127.0.0.1:8000'",
    );
    expect(aggregateCommandLine('/d/out.jsonl', ['rel.yaml'], [])).toBe(
      `reverify aggregate -i '/d/out.jsonl' -o '/d/out.jsonl' --no-merge --config '${process.cwd()}/rel.yaml'`,
    );
  });

  it('quotes for the shell and escapes glob syntax in the input', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(globLiteral('/d/run[1]*?.jsonl')).toBe('/d/run[[]1][*][?].jsonl');
    expect(globLiteral('/d/plain.jsonl')).toBe('/d/plain.jsonl');
    expect(hasMagic('plain.jsonl')).toBe(false);
    expect(aggregateCommandLine("/d/o'[x].jsonl", [], [])).toBe(
      `reverify aggregate -i '/d/o'\\''[[]x].jsonl' -o '/d/o'\\''[x].jsonl' --no-merge`,
    );
  });

  it('never prints a password given in a --server URL', () => {
    expect(aggregateCommandLine('/o.jsonl', [], ['rs=https://alice:s3cret@h:8443/x'])).toBe(
      "reverify aggregate -i '/o.jsonl' -o '/o.jsonl' --no-merge --server 'rs=https://USER:PASSWORD@h:8443/x'",
    );
  });
});
