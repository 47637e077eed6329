import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { runCommand } from '../../src/cli/run-command.js';
import { checkWorkerBound, thisMachine, workerBound, WORKER_RSS_MIB } from '../../src/config/worker-bound.js';

const GiB = 2 ** 30;

describe('--workers N: bounded by what the machine holds', () => {
  it('4 per core, and one per 480 MiB of available memory, whichever is fewer; never below 1', () => {
    expect(workerBound({ cores: 2, availableBytes: 22 * GiB })).toBe(8);
    expect(workerBound({ cores: 64, availableBytes: 8 * GiB })).toBe(Math.floor((8 * 1024) / WORKER_RSS_MIB));
    expect(workerBound({ cores: 1, availableBytes: 100 * 2 ** 20 })).toBe(1);
  });

  it('above the bound: one line that says the bound, why, and what to pass', () => {
    expect(() => checkWorkerBound(9, { cores: 2, availableBytes: 22 * GiB })).toThrow(
      '--workers 9: this machine holds at most 8 worker processes (4 per core on 2 core(s), and 22.0 GiB available / 480 MiB per worker); ' +
        'pass --workers 8 or fewer, or run `reverify worker` on more machines (docs/operating.md)',
    );
    expect(() => checkWorkerBound(8, { cores: 2, availableBytes: 22 * GiB })).not.toThrow();
  });

  it('`reverify run --workers 99999` is refused before anything starts, exit 1', async () => {
    const failure = describeFailure(
      await runCommand(
        { inputs: 'in.jsonl', rollouts: 'r.jsonl', output: 'o.jsonl' },
        { worker: true, workers: 99_999, heartbeatTimeoutMs: 10_000 },
      ).catch((e: unknown) => e),
    );
    expect(failure.code).toBe(1);
    expect(failure.line).toMatch(
      new RegExp(
        `^Error: --workers 99999: this machine holds at most ${workerBound(thisMachine())} worker processes \\(4 per core on \\d+ core\\(s\\)`,
      ),
    );
  });
});
