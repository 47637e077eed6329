import { describe, expect, it } from 'vitest';
import { checkKeyFlag } from '../../src/cli/history-command.js';

describe('reverify history --key', () => {
  it('takes T:R as the rows write the indices', () => {
    for (const key of ['12:3', ' 0 : 1 ', '"a":null', '-1:0']) expect(() => checkKeyFlag(key), key).not.toThrow();
    expect(() => checkKeyFlag(undefined)).not.toThrow();
  });

  it('refuses a value that names no rollout, with one line', () => {
    for (const key of ['abc', '12', '12:', ':3', '1:2:3', '1.5:2'])
      expect(() => checkKeyFlag(key), key).toThrow(
        `--key ${JSON.stringify(key)}: expected T:R, a rollout's _ng_task_index and _ng_rollout_index, e.g. --key 12:3`,
      );
  });
});
