import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { aggregateMetrics } from '../../src/reference-server/aggregate.js';
import type { ReferenceServerOptions } from '../../src/reference-server/options.js';
import { type ReferenceServer, startReferenceServer } from '../../src/reference-server/server.js';

type Json = Record<string, any>;

const servers: ReferenceServer[] = [];

async function start(opts: Partial<ReferenceServerOptions> = {}): Promise<ReferenceServer> {
  const server = await startReferenceServer({ port: 0, ...opts });
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** A `/verify` body as reverify sends it: the materialized input row plus the stored response. */
function verifyBody(answer: string, expected = 'B', task = 0, rollout = 0): Json {
  return {
    responses_create_params: { input: [{ role: 'user', content: '2+2? A) 3 B) 4' }] },
    response: {
      id: `resp_${task}_${rollout}`,
      object: 'response',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer, annotations: [] }] }],
      usage: { input_tokens: 12, output_tokens: 4, total_tokens: 16 },
    },
    options: [{ A: '3' }, { B: '4' }],
    expected_answer: expected,
    agent_ref: { type: 'responses_api_agents', name: 'mcqa_simple_agent' },
    _ng_task_index: task,
    _ng_rollout_index: rollout,
  };
}

async function post(server: ReferenceServer, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

/** Sends `body` in chunks of `size` bytes over one raw HTTP request (chunked transfer). */
function postInChunks(server: ReferenceServer, path: string, body: string, size: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    const bytes = Buffer.from(body);
    for (let i = 0; i < bytes.length; i += size) req.write(bytes.subarray(i, i + size));
    req.end();
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('reference server: simple routes', () => {
  it('answers GET / and reports each reverify mode as a JSON string', async () => {
    for (const mode of ['stateless', 'unknown', 'unsupported'] as const) {
      const server = await start({ mode });
      expect(await (await fetch(server.url + '/')).json()).toEqual({ status: 'ok' });
      const res = await fetch(server.url + '/reverify_mode');
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(JSON.stringify(mode));
      expect(server.stats().requests.reverify_mode).toBe(1);
    }
  });

  it('answers 404 for an unknown route and 405 for a wrong method', async () => {
    const server = await start();
    expect((await fetch(server.url + '/seed_session', { method: 'POST' })).status).toBe(404);
    expect((await fetch(server.url + '/verify')).status).toBe(405);
  });
});

describe('reference server: POST /verify', () => {
  it('grades a correct answer and echoes only params, response and the grade', async () => {
    const server = await start();
    const body = verifyBody('It is 4, so \\boxed{B}.');
    const res = await post(server, '/verify', body);
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    expect(Object.keys(json)).toEqual(['responses_create_params', 'response', 'reward', 'expected_answer', 'extracted_answer']);
    expect(json).toEqual({
      responses_create_params: body.responses_create_params,
      response: body.response,
      reward: 1.0,
      expected_answer: 'B',
      extracted_answer: 'B',
    });
  });

  it('grades a wrong answer 0.0 and accepts the /ng-rollout/<id>/verify prefix', async () => {
    const server = await start();
    const res = await post(server, '/ng-rollout/0-1/verify', verifyBody('\\boxed{A}'));
    expect(await res.json()).toMatchObject({ reward: 0.0, extracted_answer: 'A' });
    expect(server.stats().verify_outcomes.success).toBe(1);
  });

  it('returns judge-failure rows at judgeFailRate 1.0', async () => {
    const server = await start({ judgeFailRate: 1 });
    const body = verifyBody('\\boxed{B}');
    const json = (await (await post(server, '/verify', body)).json()) as Json;
    expect(json).toEqual({
      responses_create_params: body.responses_create_params,
      response: body.response,
      options: body.options,
      expected_answer: 'B',
      reward: 0.0,
      _ng_failure_class: 'judge_failed',
      _ng_failure_judge_error: 'JudgeError: simulated judge failure',
    });
    expect(server.stats().verify_outcomes).toMatchObject({ judge_failed: 1, success: 0 });
  });

  it('measures how soon each judge failure was re-judged, by the ordinal of the failure, from its answer to the next request', async () => {
    const server = await start({ judgeFailRate: 1 });
    const body = (task: number) => verifyBody('\\boxed{B}', 'B', task);
    await post(server, '/verify', body(0));
    await post(server, '/verify', body(1));
    expect(server.stats().rejudge_gaps).toEqual({});
    await sleep(120);
    await post(server, '/verify', body(0)); // task 0 again, at least 120 ms after its failure: its 2nd failure
    await sleep(40);
    await post(server, '/verify', body(0)); // and again, at least 40 ms after the 2nd
    const gaps = server.stats().rejudge_gaps;
    expect(Object.keys(gaps)).toEqual(['1', '2']);
    expect(gaps['1'].count).toBe(1); // task 1 was never sent again
    expect(gaps['1'].p50_ms).toBeGreaterThanOrEqual(119);
    expect(gaps['1'].max_ms).toBe(gaps['1'].p50_ms);
    expect(gaps['2']).toMatchObject({ count: 1 });
    expect(gaps['2'].p50_ms).toBeGreaterThanOrEqual(39);
    expect(gaps['2'].p50_ms).toBeLessThan(gaps['1'].p50_ms);
    server.resetStats();
    expect(server.stats().rejudge_gaps).toEqual({});
  });

  it('answers HTTP 500 with a JSON string at errorRate 1.0', async () => {
    const server = await start({ errorRate: 1 });
    const res = await post(server, '/verify', verifyBody('\\boxed{B}'));
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(typeof body).toBe('string');
    expect(body).toMatch(/^RuntimeError\('.+'\)$/);
  });

  it('answers 422 with a FastAPI-like detail for bodies of the wrong shape', async () => {
    const server = await start({ judgeFailRate: 1 }); // validation comes before any simulated outcome
    const cases: [unknown, Json][] = [
      ['{not json', { type: 'json_invalid', loc: ['body', 0] }],
      [[1, 2], { type: 'model_attributes_type', loc: ['body'] }],
      [{ responses_create_params: {} }, { type: 'missing', loc: ['body', 'response'], msg: 'Field required' }],
      [
        { responses_create_params: {}, response: 'text' },
        { type: 'model_attributes_type', loc: ['body', 'response'] },
      ],
    ];
    for (const [body, issue] of cases) {
      const res = await post(server, '/verify', typeof body === 'string' ? body : JSON.stringify(body));
      expect(res.status).toBe(422);
      const json = (await res.json()) as Json;
      expect(json.detail).toHaveLength(1);
      expect(json.detail[0]).toMatchObject(issue);
    }
    const stats = server.stats();
    expect(stats.requests.verify).toBe(4);
    expect(Object.values(stats.verify_outcomes).every((count) => count === 0)).toBe(true);
  });

  it('resets the connection without an answer at resetRate 1.0', async () => {
    const server = await start({ resetRate: 1 });
    await expect(post(server, '/verify', verifyBody('\\boxed{B}'))).rejects.toThrow();
    expect(server.stats().verify_outcomes.reset).toBe(1);
    await waitFor(() => server.stats().verify_in_flight === 0);
  });

  it('never answers at hangRate 1.0 until the client gives up', async () => {
    const server = await start({ hangRate: 1 });
    const started = Date.now();
    await expect(post(server, '/verify', verifyBody('\\boxed{B}'), AbortSignal.timeout(300))).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(server.stats().verify_outcomes.hang).toBe(1);
    await waitFor(() => server.stats().verify_in_flight === 0);
  });

  it('close() ends hanging requests at once', async () => {
    const server = await start({ hangRate: 1 });
    const pending = post(server, '/verify', verifyBody('\\boxed{B}'));
    await waitFor(() => server.stats().verify_outcomes.hang === 1);
    // The request hangs forever: close() resolving at all means it ended it.
    await server.close();
    await expect(pending).rejects.toThrow();
  });

  it('counts the peak of concurrent /verify requests under latency', async () => {
    const server = await start({ latencyMs: 200 });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(server, '/verify', verifyBody('\\boxed{B}', 'B', i)).then((res) => res.json())),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(answers.every((answer) => (answer as Json).reward === 1)).toBe(true);
    const stats = server.stats();
    expect(stats).toMatchObject({
      requests: { verify: 6, aggregate_metrics: 0, reverify_mode: 0 },
      verify_in_flight: 0,
      peak_verify_in_flight: 6,
      verify_outcomes: { success: 6, judge_failed: 0, error: 0, reset: 0, hang: 0 },
    });
    expect(await (await fetch(server.url + '/stats')).json()).toEqual(stats);
    // The window of the requests, stamped by the server: first arrival to last answer.
    const [first, last] = [stats.verify_first_at_ms!, stats.verify_last_answered_at_ms!];
    expect(first).toBeGreaterThanOrEqual(started - 5);
    expect(last - first).toBeGreaterThanOrEqual(190);
    expect(last).toBeLessThanOrEqual(Date.now() + 5);
    server.resetStats();
    expect(server.stats()).toMatchObject({
      requests: { verify: 0 },
      peak_verify_in_flight: 0,
      verify_first_at_ms: null,
      verify_last_answered_at_ms: null,
    });
  });

  it('draws the same outcomes for the same seed and request order', async () => {
    const rates = { judgeFailRate: 0.4, errorRate: 0.2 };
    async function outcomes(seed: number): Promise<string> {
      const server = await start({ ...rates, seed });
      let sequence = '';
      for (let i = 0; i < 40; i++) {
        const res = await post(server, '/verify', verifyBody('\\boxed{B}', 'B', i));
        const json = (await res.json()) as Json;
        sequence += res.status === 500 ? 'E' : json._ng_failure_class ? 'J' : 'S';
      }
      return sequence;
    }
    const first = await outcomes(42);
    expect(await outcomes(42)).toBe(first);
    expect(first).toMatch(/E/);
    expect(first).toMatch(/J/);
    expect(first).toMatch(/S/);
    expect(await outcomes(43)).not.toBe(first);
  });
});

describe('reference server: POST /aggregate_metrics', () => {
  const rows = [
    { _ng_task_index: 1, _ng_rollout_index: 1, reward: 1.0, response: { usage: { output_tokens: 5 } }, agent_ref: { name: 'a' } },
    { _ng_task_index: 0, _ng_rollout_index: 1, reward: 0.0, response: { usage: { output_tokens: 6 } }, agent_ref: { name: 'a' } },
    { _ng_task_index: 1, _ng_rollout_index: 0, reward: 1.0, response: { usage: { output_tokens: 5 } }, agent_ref: { name: 'a' } },
    { _ng_task_index: 0, _ng_rollout_index: 0, reward: 1.0, response: { usage: { output_tokens: 4 } }, agent_ref: { name: 'a' } },
  ];

  it('answers the default aggregation with fields in order', async () => {
    const server = await start();
    const res = await post(server, '/aggregate_metrics', { verify_responses: rows });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe(JSON.stringify(aggregateMetrics(rows)));
    const json = JSON.parse(text) as Json;
    expect(Object.keys(json)).toEqual(['group_level_metrics', 'agent_metrics', 'key_metrics', 'repeat_level_metrics']);
    expect(json.key_metrics).toEqual({ 'mean/reward': 0.75, 'mean/output_tokens': 5 });
    expect((json.repeat_level_metrics as Json[]).map((r) => r._ng_rollout_index)).toEqual([0, 1]);
    expect(server.stats().requests.aggregate_metrics).toBe(1);
  });

  it('parses a pretty-printed body with other keys sent in tiny chunks', async () => {
    const server = await start();
    const body = JSON.stringify({ note: 'é "verify_responses": [', verify_responses: rows, extra: [{ a: '[{' }] }, null, 2);
    const { status, text } = await postInChunks(server, '/aggregate_metrics', body, 7);
    expect(status).toBe(200);
    expect(text).toBe(JSON.stringify(aggregateMetrics(rows)));
  });

  it('answers all-empty for an empty list', async () => {
    const server = await start();
    const res = await post(server, '/aggregate_metrics', { verify_responses: [] });
    expect(await res.json()).toEqual({ group_level_metrics: [], agent_metrics: {}, key_metrics: {}, repeat_level_metrics: [] });
  });

  it('answers 422 when verify_responses is missing, not a list, or holds a non-object', async () => {
    const server = await start();
    const cases: [string, Json][] = [
      ['{"rows": []}', { type: 'missing', loc: ['body', 'verify_responses'] }],
      ['{"verify_responses": {"a": 1}}', { type: 'list_type', loc: ['body', 'verify_responses'] }],
      ['{"verify_responses": [{"reward": 1}, 3]}', { type: 'dict_type', loc: ['body', 'verify_responses', 1] }],
      ['[]', { type: 'model_attributes_type', loc: ['body'] }],
      ['{"verify_responses": [{"reward": 1}', { type: 'json_invalid' }],
    ];
    for (const [body, issue] of cases) {
      const res = await post(server, '/aggregate_metrics', body);
      expect(res.status, body).toBe(422);
      expect(((await res.json()) as Json).detail[0]).toMatchObject(issue);
    }
  });

  it('answers 500 with the Python exception repr for duplicate keys', async () => {
    const server = await start();
    const res = await post(server, '/aggregate_metrics', { verify_responses: [rows[0], rows[0]] });
    expect(res.status).toBe(500);
    expect(await res.json()).toBe("ValueError('Duplicate materialized input row for rollout key (1, 1)')");
  });

  it('streams a large request and answer (20,000 rows)', async () => {
    const server = await start();
    const many = Array.from({ length: 20_000 }, (_, i) => ({
      _ng_task_index: Math.floor(i / 4),
      _ng_rollout_index: i % 4,
      reward: i % 3 === 0 ? 1.0 : 0.0,
      response: { usage: { input_tokens: 100 + (i % 17), output_tokens: 20 + (i % 5), total_tokens: 120 + (i % 17) + (i % 5) } },
    }));
    const res = await post(server, '/aggregate_metrics', { verify_responses: many });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify(aggregateMetrics(many)));
  });
});
