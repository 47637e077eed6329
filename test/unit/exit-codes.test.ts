import { WorkflowFailedError } from '@temporalio/client';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TerminatedFailure,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { exitStatusOf, incompleteLines } from '../../src/cli/end-summary.js';
import { stoppedEarlyLines } from '../../src/cli/stopped-early.js';
import {
  describeFailure,
  EXIT_CANCELLED,
  EXIT_GATE_FAILED,
  EXIT_OK,
  EXIT_ROLLOUTS_MISSING,
  EXIT_RUN_FAILED,
  EXIT_USER_ERROR,
} from '../../src/cli/exit-codes.js';
import type { Coverage } from '../../src/contract/coverage.js';
import { MetricsMissingError, RunCancelledError } from '../../src/cli/run-endings.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { ConfigError, InputError } from '../../src/contract/errors.js';
import { enforceGates, GateFailedError } from '../../src/cli/gate-ending.js';
import { checkGates } from '../../src/stats/gate-check.js';
import { parseGateRules } from '../../src/stats/gate-rules.js';

/** The chain the client sees when an activity fails the workflow. */
function viaActivity(inner: Error, activityType = 'planRun'): WorkflowFailedError {
  const activity = new ActivityFailure('Activity task failed', activityType, '1', RetryState.NON_RETRYABLE_FAILURE, 'worker-1@host', inner);
  return new WorkflowFailedError('Workflow execution failed', activity, RetryState.NON_RETRYABLE_FAILURE);
}

describe('exit statuses', () => {
  it('0 ok, 1 user error, 2 run failed (also: rows complete but metrics missing), 4 cancelled', () => {
    expect([EXIT_OK, EXIT_USER_ERROR, EXIT_RUN_FAILED, EXIT_CANCELLED]).toEqual([0, 1, 2, 4]);
  });
});

describe('a failed --fail-if gate', () => {
  it('ends with status 5 and the lines of the rules that hold; those that pass go with the other lines', () => {
    expect(EXIT_GATE_FAILED).toBe(5);
    const rules = parseGateRules(['all.delta < -0.02', 'all.delta.upper < -0.1', 'a.delta < 0']);
    const outcomes = checkGates(rules, (scope) => ({ value: { estimate: -0.05, lo: -0.08, hi: -0.02 }, basis: scope }));
    const said: string[] = [];
    let thrown: unknown;
    try {
      enforceGates(outcomes, (l) => said.push(l));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GateFailedError);
    expect(said).toEqual([outcomes[1].line]);
    const { line, code } = describeFailure(thrown);
    expect(code).toBe(5);
    expect(line.split('\n')).toEqual([outcomes[0].line, outcomes[2].line]);
    expect(line).toMatch(
      /^Gate failed: all\.delta\(mean\/reward\) < -0\.02 holds: delta\(mean\/reward\) of all agents −0\.0500 \[−0\.0800, −0\.0200\] \(all\)\n/,
    );
  });

  it('passes quietly when no rule holds', () => {
    const outcomes = checkGates(parseGateRules(['all.new > 0.9']), () => ({ value: { estimate: 0.5, lo: 0.4, hi: 0.6 }, basis: 'b' }));
    const said: string[] = [];
    expect(enforceGates(outcomes, (l) => said.push(l))).toBe(outcomes);
    expect(said).toHaveLength(1);
  });
});

describe('describeFailure', () => {
  it('never prints the userinfo of a URL, whatever the error', () => {
    const err = new Error('cannot reach the MLflow tracking server http://u:S3CRETMARKER@127.0.0.1:5000: fetch failed');
    expect(describeFailure(err).line).toBe(
      'Error: the run failed: cannot reach the MLflow tracking server http://***@127.0.0.1:5000: fetch failed',
    );
    expect(describeFailure(new ConfigError('--config x: https://a:S3CRETMARKER@h/v1 is wrong')).line).not.toContain('S3CRETMARKER');
  });

  it('a ConfigError: exit 1, `Error: <message>`', () => {
    expect(describeFailure(new ConfigError('out.jsonl exists; use --overwrite or --resume'))).toEqual({
      line: 'Error: out.jsonl exists; use --overwrite or --resume',
      code: 1,
    });
  });

  it('an InputError (a ConfigError): exit 1 with its file:line message', () => {
    expect(describeFailure(new InputError('inputs.jsonl:3: not valid JSON'))).toEqual({
      line: 'Error: inputs.jsonl:3: not valid JSON',
      code: 1,
    });
  });

  it('ApplicationFailure ConfigError inside ActivityFailure inside WorkflowFailedError: exit 1, inner message', () => {
    const err = viaActivity(ApplicationFailure.nonRetryable('rollouts.jsonl:7: missing response', 'ConfigError'));
    expect(describeFailure(err)).toEqual({ line: 'Error: rollouts.jsonl:7: missing response', code: 1 });
  });

  it('ApplicationFailure VerifyRejected inside ActivityFailure inside WorkflowFailedError: exit 1, inner message', () => {
    const msg = "resources server 'math' (http://127.0.0.1:9/) rejected the first 20 /verify requests";
    const err = viaActivity(ApplicationFailure.nonRetryable(msg, 'VerifyRejected'), 'verifyBatch');
    expect(describeFailure(err)).toEqual({ line: `Error: ${msg}`, code: 1 });
  });

  it('the workflow rethrowing the user failure as its own (no ActivityFailure in between): exit 1', () => {
    const err = new WorkflowFailedError(
      'Workflow execution failed',
      ApplicationFailure.nonRetryable('server math does not support reverify mode', 'ConfigError'),
      RetryState.NON_RETRYABLE_FAILURE,
    );
    expect(describeFailure(err)).toEqual({ line: 'Error: server math does not support reverify mode', code: 1 });
  });

  it('a bare ApplicationFailure of a user type: exit 1', () => {
    expect(describeFailure(ApplicationFailure.retryable('bad config', 'ConfigError'))).toEqual({
      line: 'Error: bad config',
      code: 1,
    });
  });

  it('an activity failure of another type: exit 2, `Error: the run failed: <inner message>`', () => {
    const err = viaActivity(ApplicationFailure.nonRetryable('ECONNREFUSED 127.0.0.1:8000', 'Error'), 'verifyBatch');
    expect(describeFailure(err)).toEqual({ line: 'Error: the run failed: ECONNREFUSED 127.0.0.1:8000', code: 2 });
  });

  it('an ApplicationFailure without a type: exit 2', () => {
    const err = viaActivity(ApplicationFailure.create({ message: 'boom' }));
    expect(describeFailure(err)).toEqual({ line: 'Error: the run failed: boom', code: 2 });
  });

  it('an activity timeout: exit 2 with the timeout message', () => {
    const err = viaActivity(new TimeoutFailure('activity StartToClose timeout', undefined, TimeoutType.START_TO_CLOSE));
    expect(describeFailure(err)).toEqual({ line: 'Error: the run failed: activity StartToClose timeout', code: 2 });
  });

  it('a terminated workflow: exit 2; a cancelled one: exit 4, with how to continue', () => {
    const terminated = new WorkflowFailedError(
      'Workflow execution terminated',
      new TerminatedFailure('Terminated by operator'),
      RetryState.NON_RETRYABLE_FAILURE,
    );
    expect(describeFailure(terminated)).toEqual({ line: 'Error: the run failed: Terminated by operator', code: 2 });
    const cancelled = new WorkflowFailedError(
      'Workflow execution cancelled',
      new CancelledFailure('Workflow canceled'),
      RetryState.NON_RETRYABLE_FAILURE,
    );
    expect(describeFailure(cancelled)).toEqual({
      line: 'Cancelled: the run was cancelled. To continue, run the same command with --resume.',
      code: 4,
    });
  });

  it('what `reverify run` throws for a cancelled run (exit 4: one line) and for missing metrics (exit 2: the reason, then the command): as is', () => {
    expect(describeFailure(new RunCancelledError('/d/out.jsonl'))).toEqual({
      line: "Cancelled: the run writing '/d/out.jsonl' was cancelled; the rows it committed are kept in its output and sidecar. To continue, run the same command with --resume.",
      code: 4,
    });
    const result = {
      outputs: {
        output: '/d/out.jsonl',
        sidecar: '/d/out_failures.jsonl',
        metrics: '/d/out_aggregate_metrics.json',
        workDir: '/d/.out.jsonl.reverify',
      },
      aggregationError: "resources server 'rs' at http://h:1: POST /aggregate_metrics failed: HTTP 422: bad",
    } as RunResult;
    expect(
      describeFailure(
        new MetricsMissingError(result, "reverify aggregate -i '/d/out.jsonl' -o '/d/out.jsonl' --no-merge --server 'rs=http://h:1'"),
      ),
    ).toEqual({
      line:
        "Error: the rows are complete but the aggregate metrics could not be computed: resources server 'rs' at http://h:1: POST /aggregate_metrics failed: HTTP 422: bad; " +
        "'/d/out.jsonl' and '/d/out_failures.jsonl' are complete.\n" +
        "Compute the metrics later (once the server is fixed) with: reverify aggregate -i '/d/out.jsonl' -o '/d/out.jsonl' --no-merge --server 'rs=http://h:1'",
      code: 2,
    });
  });

  it('a WorkflowFailedError without a cause: exit 2 with its own message', () => {
    const err = new WorkflowFailedError('Workflow execution failed', undefined, RetryState.NON_RETRYABLE_FAILURE);
    expect(describeFailure(err)).toEqual({ line: 'Error: the run failed: Workflow execution failed', code: 2 });
  });

  it('a plain Error: exit 2 with its message', () => {
    expect(describeFailure(new Error('connect ECONNREFUSED 127.0.0.1:7233'))).toEqual({
      line: 'Error: the run failed: connect ECONNREFUSED 127.0.0.1:7233',
      code: 2,
    });
  });

  it('a non-Error thrown value: exit 2 with its string form', () => {
    expect(describeFailure('oops')).toEqual({ line: 'Error: the run failed: oops', code: 2 });
  });

  it('a plain Error whose name is ConfigError (not the class) is not a user error', () => {
    const e = new Error('looks like config');
    e.name = 'ConfigError';
    expect(describeFailure(e).code).toBe(2);
  });
});

describe('exitStatusOf: one rule from the coverage of the files', () => {
  const coverage = (over: Partial<Coverage>) =>
    ({ retryable: 0, unknown: 0, never_dispatched: 0, attempts_exhausted: 0, ...over }) as Coverage;
  const result = (over: Partial<RunResult>) =>
    ({ outputs: { output: '/d/o.jsonl', sidecar: '/d/o_failures.jsonl' }, ...over }) as RunResult;

  it('3 when a rollout is missing from the score (retryable, not persisted, never sent, at the cap), whatever this run counted', () => {
    for (const missing of [{ retryable: 1 }, { unknown: 1 }, { never_dispatched: 1 }, { attempts_exhausted: 1 }])
      for (const missingAfterCap of [0, 1])
        expect(exitStatusOf(result({ coverage: coverage(missing), missingAfterCap })), JSON.stringify(missing)).toBe(EXIT_ROLLOUTS_MISSING);
  });

  it('0 when nothing is missing, even if this run saw judge failures; 2 when the metrics are missing', () => {
    expect(exitStatusOf(result({ coverage: coverage({}), missingAfterCap: 3 }))).toBe(EXIT_OK);
    expect(exitStatusOf(result({ coverage: coverage({ retryable: 1 }), aggregationError: 'HTTP 422' }))).toBe(EXIT_RUN_FAILED);
  });

  it('the remedy: --resume for rollouts below the cap, --extend-attempts only for those at it; ATIF: --overwrite', () => {
    const r = result({ coverage: coverage({ retryable: 2, unknown: 1, attempts_exhausted: 4, attempt_cap: 3 }) });
    const [below, atCap] = incompleteLines(r, 3);
    expect(below).toMatch(
      /^Incomplete: 3 rollout\(s\) still missing from the score, below the attempt cap .*run the same command with --resume$/,
    );
    expect(atCap).toMatch(/^Incomplete: 4 rollout\(s\) still failed after 3 attempt\(s\), the attempt cap .*--resume --extend-attempts N/);
    expect(incompleteLines(result({ coverage: coverage({ retryable: 1 }) }), 3)).toHaveLength(1);
    expect(incompleteLines(r, 3, true)).toEqual([expect.stringMatching(/7 rollout.*ATIF runs cannot be resumed.*--overwrite/)]);
  });

  it('a clean early stop (--stop-when) is 0: the rollouts it never started are not missing; other missing ones still give 3', () => {
    const stoppedEarly = { rule: 'delta-excludes-zero', rows: 40, planned: 100 };
    expect(exitStatusOf(result({ coverage: coverage({ never_dispatched: 60 }), stoppedEarly }))).toBe(EXIT_OK);
    expect(incompleteLines(result({ coverage: coverage({ never_dispatched: 60 }), stoppedEarly }), 3)).toEqual([]);
    const failed = result({ coverage: coverage({ never_dispatched: 60, retryable: 2 }), stoppedEarly });
    expect(exitStatusOf(failed)).toBe(EXIT_ROLLOUTS_MISSING);
    expect(incompleteLines(failed, 3)).toEqual([expect.stringMatching(/^Incomplete: 2 rollout\(s\) still missing/)]);
    expect(stoppedEarlyLines(failed)).toEqual([
      'Stopped early: delta-excludes-zero at 40 of 100 rows (--stop-when); 60 rollout(s) never started are listed in /d/o_unstarted.jsonl: ' +
        'to verify them too, run the same command with --resume and without --stop-when',
    ]);
    expect(stoppedEarlyLines(result({ coverage: coverage({ never_dispatched: 60 }) }))).toEqual([]);
  });
});
