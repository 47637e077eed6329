/**
 * The history is the audit trail (DESIGN.md): each batch result names every row that did not reach
 * the main output (key, class, status, attempt), every failed attempt of a batch stays listed,
 * `reverify history` reads both back, and neither secrets (an API key of the config, credentials of
 * a --server URL) nor row content (a marker in the stored responses and in the judge's replies)
 * ever enters the history. Real dev server, real HTTP (a scripted resources server).
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fetchRunChain, historyCommand } from '../../src/cli/history-command.js';
import { readHistory } from '../../src/cli/history-events.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runInProcess } from '../helpers/run-fixtures.js';
import { emptyMetrics, keyText, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { rows, tasks, writeAgentsConfig, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('audit-trail');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

const MARKER = 'ROW-CONTENT-MARKER-7f3a9c';
const API_KEY = 'sk-audit-SECRET-4242';
const PASSWORD = 'audit-p4ss-SECRET';

/** The chain's events as JSON, with every payload also decoded to text. */
function historyText(events: unknown): string {
  const json = JSON.stringify(events);
  return (
    json + json.replace(/"data":"([A-Za-z0-9+/=]*)"/g, (_m, b64: string) => JSON.stringify(Buffer.from(b64, 'base64').toString('utf8')))
  );
}

describe('the audit trail in the history', () => {
  it('names the rows not in the main output and every failed attempt; `history` reads them; no secret or row content enters it', async () => {
    const rs = await server({
      aggregate: emptyMetrics,
      verify: (row, attempt) => {
        const seen = JSON.stringify(row).includes(MARKER) ? MARKER : 'none';
        switch (keyText(row)) {
          case '1:0': // re-judged twice, then scored
            return attempt < 2 ? reward(0.0, { _ng_failure_class: 'judge_failed', judge_note: seen }) : reward(1.0, { judge_note: seen });
          case '2:0':
            return { status: 422, body: { detail: `cannot grade ${seen}` } };
          case '3:0': // fails every try of the first activity attempt while the others are answered
            return attempt < 6 ? { status: 500, raw: '"JudgeUnavailable"' } : reward(1.0, { judge_note: seen });
          default:
            return reward(1.0, { judge_note: seen });
        }
      },
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
    // The stored responses carry the marker (row content), and the judge echoes it.
    writeFileSync(f.rollouts, readFileSync(f.rollouts, 'utf8').replaceAll('\\\\boxed{A}', `${MARKER} \\\\boxed{A}`));
    const config = writeAgentsConfig(f.dir, { agent_a: { server: 'rs', url: rs.url } });
    appendFileSync(
      config,
      [
        'policy_model:',
        '  responses_api_models:',
        '    openai_model:',
        '      entrypoint: app.py',
        `      openai_api_key: ${API_KEY}`,
        '',
      ].join('\n'),
    );
    const { error } = await runInProcess({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      configs: [config],
      servers: [`rs=${rs.url.replace('http://', `http://judge:${PASSWORD}@`)}`],
      rejudgeDelayMs: 0,
      batchSize: 10,
    });
    expect(error).toBeNull();
    expect(rs.verifyBodies.some((b) => JSON.stringify(b).includes(MARKER))).toBe(true);
    expect(rows(f.output).find((r) => keyText(r) === '1:0')?.judge_note).toBe(MARKER);

    const workflowId = workflowIdForOutput(f.output);
    const events = await fetchRunChain(client(), workflowId);
    const text = historyText(events);
    for (const secret of [API_KEY, PASSWORD, MARKER]) expect(text).not.toContain(secret);
    // Every payload is JSON text (the default converter's `json/plain`), which the UI shows as text.
    const encodings = new Set(
      [...JSON.stringify(events).matchAll(/"encoding":"([A-Za-z0-9+/=]*)"/g)].map((m) => Buffer.from(m[1], 'base64').toString()),
    );
    expect([...encodings].filter((e) => e !== 'json/plain' && e !== 'binary/null')).toEqual([]);
    expect(encodings.has('json/plain')).toBe(true);

    // Each batch result lists its rows not in the main output; the failed attempt is listed by the next.
    const { batches, timeline } = readHistory(events);
    const notMain = batches.map((b) => [b.round, b.result.audit?.notMain]);
    expect(notMain).toEqual([
      [0, ['1:0 judge_failed a1', '2:0 verify_rejected 422 a1']],
      [1, ['1:0 judge_failed a1']],
      [2, []],
    ]);
    const first = batches[0];
    expect(first.attempt).toBe(2);
    expect(first.result.audit?.failedAttempts).toEqual([expect.stringMatching(/^a1 \d+@\S+ \d{4}-\d\d-\d\dT\S+Z VerifyRowsFailing 500$/)]);
    expect(timeline.map((t) => t.what)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^ {2}failed attempt a1 .* VerifyRowsFailing 500$/)]),
    );

    // `reverify history --key`: both failed attempts, then the score.
    const lines: string[] = [];
    await historyCommand({ output: f.output, key: '1:0' }, (l) => lines.push(l));
    expect(lines[0]).toBe('Rollout 1:0: 2 attempt(s) not in the main output, then scored');
    expect(lines[1]).toMatch(/^ {2}round 1, batch 1, activity attempt 1, worker \d+@\S+, \S+Z: judge_failed$/);
    // Batches are numbered across the run's rounds (round 1 had batch 1): round 2's is batch 2.
    expect(lines[2]).toMatch(/^ {2}round 2, batch 2, activity attempt 1, worker .*: judge_failed$/);
    expect(lines[3]).toBe('  main output: reward 1');
    const json: string[] = [];
    await historyCommand({ output: f.output, key: '1:0', json: true }, (l) => json.push(l));
    expect(JSON.parse(json.join('\n'))).toMatchObject({ key: '1:0', attempts: [{ round: 0 }, { round: 1 }], main: { reward: 1 } });

    // The timeline: phases, rounds, the failed attempt, the end.
    const timelineLines: string[] = [];
    await historyCommand({ output: f.output }, (l) => timelineLines.push(l));
    const all = timelineLines.join('\n');
    expect(all).toContain('run started');
    expect(all).toContain('re-judge round 2: verify rows');
    // No timer: with no re-judge delay each failure is planned and sent again at once.
    expect(all).not.toContain('waiting');
    expect(all).toContain('run completed');

    // The memo names the output (the UI shows it; the workflow id is derived from it).
    const desc = await client().workflow.getHandle(workflowId).describe();
    expect(desc.memo).toMatchObject({ output: f.output, rollouts: f.rollouts });
  });
});
