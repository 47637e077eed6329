/**
 * The "dropped from the score" line of each sidecar row, compared with what NeMo Gym 0.7.0's
 * formatting gives for the same rows (the expected strings were produced by Python's
 * `json.dumps(summary, sort_keys=True)` and `str(...)[:200]`).
 */
import { describe, expect, it } from 'vitest';
import { droppedFromScore, DROPPED_FROM_SCORE, pyJsonString } from '../../src/contract/dropped-row.js';

const line = (rest: string) => `${DROPPED_FROM_SCORE}${rest}`;

describe('droppedFromScore', () => {
  it('key, agent, class and failure message', () => {
    const row =
      '{"_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"name":"mcqa_simple_agent"},"reward":0.0,' +
      '"_ng_failure_class":"judge_failed","_ng_failure_message":"judge timed out after 30 s"}';
    expect(droppedFromScore(row)).toEqual({
      failureClass: 'judge_failed',
      line: line(
        'row={"_ng_rollout_index": 1, "_ng_task_index": 3, "agent_name": "mcqa_simple_agent"} class=judge_failed error=judge timed out after 30 s',
      ),
    });
  });

  it('a big task index keeps its digits; non-ASCII escaped; environment server and taskset of a task row; a non-string error as its repr, cut at 200', () => {
    const row =
      '{"_ng_task_index":12345678901234567890,"_ng_rollout_index":0,"agent_ref":{"name":"agént"},"_ng_environment_server":"env_a",' +
      `"task_id":{"taskset":"math"},"task_input":{},"_ng_failure_class":"transient","error":{"status":503,"detail":"${'x'.repeat(300)}"}}`;
    const detail = `{'status': 503, 'detail': '${'x'.repeat(300)}`.slice(0, 200);
    expect(droppedFromScore(row)?.line).toBe(
      line(
        'row={"_ng_rollout_index": 0, "_ng_task_index": 12345678901234567890, "agent_name": "ag\\u00e9nt", "environment_server": "env_a", "taskset": "math"} ' +
          `class=transient error=${detail}`,
      ),
    );
  });

  it('no taskset without task_input; an empty failure message falls back to error; emoji kept in the detail', () => {
    const row =
      '{"_ng_task_index":7,"_ng_rollout_index":2,"task_id":{"taskset":"math"},"_ng_failure_class":"verify_rejected",' +
      '"_ng_failure_message":"","error":"HTTP 422: bad 😀 body"}';
    expect(droppedFromScore(row)?.line).toBe(
      line('row={"_ng_rollout_index": 2, "_ng_task_index": 7} class=verify_rejected error=HTTP 422: bad 😀 body'),
    );
  });

  it('a line that is not a JSON object gives null', () => {
    expect(droppedFromScore('not json')).toBeNull();
  });

  it('pyJsonString escapes as ensure_ascii does (astral characters as surrogate pairs)', () => {
    expect(pyJsonString('a😀é"')).toBe('"a\\ud83d\\ude00\\u00e9\\""');
  });
});
