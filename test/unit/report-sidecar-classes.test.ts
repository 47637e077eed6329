import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rawField } from '../../src/contract/json-spans.js';
import { jsonlLines } from '../../src/io/jsonl-lines.js';
import { sidecarClasses } from '../../src/report/sidecar-classes.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-sidecar-classes-');

/** The counts from each line's text alone (what sidecarClasses did before the byte scanner): the oracle. */
async function onText(path: string): Promise<{ rows: number; byClass: Record<string, number> }> {
  const byClass: Record<string, number> = {};
  let rows = 0;
  for await (const line of jsonlLines(path)) {
    if (line.text.trim() === '') continue;
    rows++;
    let cls = '(none)';
    try {
      const raw = rawField(line.text, '_ng_failure_class');
      const v = raw === undefined ? null : (JSON.parse(raw) as unknown);
      if (typeof v === 'string') cls = v;
    } catch {
      cls = '(unreadable row)';
    }
    byClass[cls] = (byClass[cls] ?? 0) + 1;
  }
  return { rows, byClass };
}

describe('sidecarClasses', () => {
  it('counts every tricky line as the text path does', async () => {
    const lines: (string | Buffer)[] = [
      '{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_failure_class":"transient"}',
      '{"_ng_failure_class":"judge_failed","_ng_failure_class":"timeout"}', // repeated: the last wins
      '{"_ng_failure_\\u0063lass":"escaped"}',
      '{"_ng_failure_class":7}',
      '{"_ng_failure_class":"a\\"b"}',
      '{"x":1}',
      '',
      '   ',
      'not json',
      '{"_ng_failure_class":"tab\there"}', // JSON.parse refuses the raw tab, the text path does not
      '{"_ng_failure_class":[1,,2]}', // unreadable
      Buffer.concat([Buffer.from('{"_ng_failure_class":"'), Buffer.from([0xff]), Buffer.from('"}')]),
      '{"_ng_failure_class":"transient"}\r',
    ];
    for (const last of ['', '{"_ng_failure_class":"timeout"}', '{"_ng_failure_class":"tim']) {
      const path = tmp.unique('side', '.jsonl');
      writeFileSync(path, Buffer.concat([...lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')])), Buffer.from(last)]));
      const got = await sidecarClasses(path);
      expect(got).toEqual(await onText(path));
      expect(got!.byClass.transient).toBe(2);
      expect(got!.byClass.escaped).toBe(1);
    }
  });
});
