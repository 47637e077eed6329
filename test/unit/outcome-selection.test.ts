import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { selectRows, type Disposition, type SavedRow } from '../../src/contract/outcome-selection.js';
import { readSelectedOutcomes } from '../../src/io/selected-outcomes.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-selection-');

const main = (lineNo: number): SavedRow => ({ file: 'main', lineNo, omitted: false });
const failed = (lineNo: number, omitted = false): SavedRow => ({ file: 'sidecar', lineNo, omitted });

describe('selectRows (the selected outcome of one rollout of a plain run)', () => {
  it('a main row wins: success; its sidecar rows are superseded', () => {
    expect(selectRows([failed(1), failed(4), main(2)])).toEqual([{ row: main(2), disposition: 'success' }]);
  });
  it('without a main row, the latest sidecar row: failure', () => {
    expect(selectRows([failed(7), failed(3)])).toEqual([{ row: failed(7), disposition: 'failure' }]);
  });
  it('the latest sidecar row stamped _ng_omitted: omitted; an earlier omission is superseded by a later failure', () => {
    expect(selectRows([failed(1), failed(5, true)])).toEqual([{ row: failed(5, true), disposition: 'omitted' }]);
    expect(selectRows([failed(1, true), failed(5)])).toEqual([{ row: failed(5), disposition: 'failure' }]);
  });
  it('never unknown: a plain run has no allocated attempts', () => {
    expect(selectRows([])).toEqual([]);
  });
});

const row = (t: number, r: number, extra = '') => `{"_ng_task_index": ${t}, "_ng_rollout_index": ${r}${extra}}`;

async function read(output: string, want: Disposition[], maxRecords?: number) {
  const lines: string[] = [];
  const summary = await readSelectedOutcomes(
    { output, sidecar: output.replace(/\.jsonl$/, '_failures.jsonl') },
    { want: new Set(want) },
    (o) => void lines.push(o.text!),
    { maxRecords },
  );
  return { lines, summary };
}

describe('readSelectedOutcomes (streamed, keys joined by an external sort)', () => {
  const all: Disposition[] = ['success', 'failure', 'omitted', 'unknown'];

  function fixture(): string {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    writeFileSync(out, [row(0, 0, ', "reward": 1.0'), '', row(2, 0, ', "reward": 0.0')].join('\n') + '\n' + row(9, 9));
    writeFileSync(
      join(d, 'out_failures.jsonl'),
      [
        row(0, 0, ', "_ng_failure_class": "judge_failed"'), // superseded by the main row
        row(1, 0, ', "_ng_failure_class": "judge_failed", "n": 1'), // superseded by the later one
        row(3, 0, ', "_ng_failure_class": "skipped", "_ng_failure_terminal": true, "_ng_omitted": true'),
        row(1, 0, ', "_ng_failure_class": "judge_failed", "n": 2'),
        row(4, 0, ', "_ng_failure_class": "transient", "_ng_omitted": false'),
      ].join('\n') + '\n',
    );
    return out;
  }

  it('each disposition: success = main rows, failure = latest sidecar row of keys not in main, omitted = _ng_omitted', async () => {
    const out = fixture();
    for (const maxRecords of [undefined, 2]) {
      const s = await read(out, ['success'], maxRecords);
      expect(s.lines).toEqual([row(0, 0, ', "reward": 1.0'), row(2, 0, ', "reward": 0.0')]); // the unterminated last line is not read
      const f = await read(out, ['failure'], maxRecords);
      expect(f.lines).toEqual([
        row(1, 0, ', "_ng_failure_class": "judge_failed", "n": 2'),
        row(4, 0, ', "_ng_failure_class": "transient", "_ng_omitted": false'),
      ]);
      const o = await read(out, ['omitted'], maxRecords);
      expect(o.lines).toEqual([row(3, 0, ', "_ng_failure_class": "skipped", "_ng_failure_terminal": true, "_ng_omitted": true')]);
      expect((await read(out, ['unknown'], maxRecords)).lines).toEqual([]);
      const a = await read(out, all, maxRecords);
      expect(a.lines).toHaveLength(5);
      expect(a.summary).toMatchObject({
        counts: { success: 2, failure: 2, omitted: 1, unknown: 0 },
        superseded: 2,
        rawOutcomesAreSelected: false,
        files: [out, join(dirname(out), 'out_failures.jsonl')],
        cutOff: [out], // its last line is cut off: a plain reader would fail on it
      });
    }
  });

  it('raw outcomes are selected when no row is superseded (one row per rollout across both files)', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    writeFileSync(out, row(0, 0) + '\n');
    writeFileSync(join(d, 'out_failures.jsonl'), row(1, 0, ', "_ng_failure_class": "judge_failed"') + '\n');
    expect((await read(out, all)).summary).toMatchObject({
      counts: { success: 1, failure: 1, omitted: 0, unknown: 0 },
      superseded: 0,
      rawOutcomesAreSelected: true,
      files: [out, join(d, 'out_failures.jsonl')],
      cutOff: [],
    });
  });

  it('a line that is not JSON: one error naming file:line', async () => {
    const d = freshDir();
    const out = join(d, 'out.jsonl');
    writeFileSync(out, row(0, 0) + '\n[1, 2\n');
    await expect(read(out, all)).rejects.toThrow(`${out}:2: not a JSON object; fix or remove that line to read the run`);
  });
});
