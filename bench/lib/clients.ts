/**
 * The two reference clients of the throughput bench, both in this (bench) process:
 * - `driveCapacity`: a plain load generator (undici Pool, keep-alive, N connections) sending
 *   payloads prebuilt in memory: it measures what the resources server can take.
 * - `naiveLoop`: what one would write by hand: stream the rollouts, look the input row up in a Map,
 *   `fetch` /verify with N in flight, append each result to a file.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { buildPayload, readRolloutResponse } from '../../src/contract/payload.js';
import { lineKeyId } from '../../src/contract/row-key.js';

function lines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
}

/**
 * The `/verify` bodies exactly as reverify builds them: each rollout joined with its materialized
 * input row by key, then `buildPayload(input, rollout.response)`. At most `limit` are built (the
 * load generator cycles through them); returns them with their total size.
 */
export async function prebuildPayloads(
  inputsPath: string,
  rolloutsPath: string,
  limit: number,
): Promise<{ payloads: string[]; bytes: number }> {
  const inputs = new Map<string, string>();
  for await (const line of lines(inputsPath)) {
    const key = lineKeyId(line);
    if (key !== null) inputs.set(key, line);
  }
  const payloads: string[] = [];
  let bytes = 0;
  for await (const line of lines(rolloutsPath)) {
    if (payloads.length >= limit) break;
    const key = lineKeyId(line);
    if (key === null) continue;
    const input = inputs.get(key);
    const response = readRolloutResponse(line);
    if (input === undefined || response === null) throw new Error(`rollout ${key} has no input row or no response`);
    const payload = buildPayload(input, response);
    bytes += Buffer.byteLength(payload);
    payloads.push(payload);
  }
  return { payloads, bytes };
}

export interface ClientRun {
  /** performance.now() of the first request sent and of the last reply read. */
  startMs: number;
  endMs: number;
  requests: number;
  non200: number;
}

/** How the load generator re-judges: a failure in re-judgment round r (0: the first attempt) is sent again `delayMs(r)` after it, up to `maxAttempts` in all. */
export interface Rejudging {
  maxAttempts: number;
  delayMs: (round: number) => number;
}

/**
 * Sends `total` POST /verify (cycling through `payloads`) with `concurrency` in flight on a
 * keep-alive Pool. With `rejudge`, the ideal streamed client: each judge failure is sent again its
 * delay after its answer, before any new row, until it is judged or has had `maxAttempts`; the
 * requests it made are in `requests`.
 */
export async function driveCapacity(
  url: string,
  payloads: string[],
  total: number,
  concurrency: number,
  rejudge?: Rejudging,
): Promise<ClientRun> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let next = 0;
  let non200 = 0;
  let requests = 0;
  let waiting = 0;
  let inFlight = 0;
  const due: { body: string; attempt: number }[] = [];
  const wakers: (() => void)[] = [];
  // A failure of attempt n waits the delay of re-judgment round n (0-based: n - 1), then is attempt n + 1.
  const later = (body: string, failed: number) => {
    waiting++;
    setTimeout(
      () => {
        waiting--;
        due.push({ body, attempt: failed + 1 });
        wakers.splice(0).forEach((w) => w());
      },
      rejudge!.delayMs(failed - 1),
    );
  };
  const startMs = performance.now();
  const lane = async (): Promise<void> => {
    for (;;) {
      const job = due.shift() ?? (next < total ? { body: payloads[next++ % payloads.length], attempt: 1 } : null);
      if (job === null) {
        if (waiting === 0 && inFlight === 0) return wakers.splice(0).forEach((w) => w());
        await new Promise<void>((r) => wakers.push(r));
        continue;
      }
      requests++;
      inFlight++;
      const res = await pool.request({ method: 'POST', path: '/verify', headers: { 'content-type': 'application/json' }, body: job.body });
      const text = await res.body.text();
      inFlight--;
      if (res.statusCode !== 200) non200++;
      else if (rejudge && job.attempt < rejudge.maxAttempts && text.includes('"judge_failed"')) later(job.body, job.attempt);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    await pool.close();
  }
  return { startMs, endMs: performance.now(), requests, non200 };
}

export interface NaiveRun extends ClientRun {
  /** Time to load the inputs into the Map, ms. */
  loadMs: number;
}

/**
 * The naive baseline: inputs into a Map (parsed), rollouts streamed line by line, payload =
 * `{...input, response}`, global `fetch` with `concurrency` requests in flight, each result stamped
 * with the key and agent_ref and appended to `outPath`.
 */
export async function naiveLoop(
  url: string,
  inputsPath: string,
  rolloutsPath: string,
  outPath: string,
  concurrency: number,
): Promise<NaiveRun> {
  const t0 = performance.now();
  const inputs = new Map<string, Record<string, unknown>>();
  for await (const line of lines(inputsPath)) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as Record<string, unknown>;
    inputs.set(`${row._ng_task_index}|${row._ng_rollout_index}`, row);
  }
  const loadMs = performance.now() - t0;

  const out = createWriteStream(outPath);
  let inFlight = 0;
  let requests = 0;
  let non200 = 0;
  const failed: { error?: Error } = {};
  let wake: (() => void) | null = null;
  const startMs = performance.now();
  const verify = async (payload: string, stamps: Record<string, unknown>) => {
    try {
      const res = await fetch(`${url}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
      if (res.status !== 200) non200++;
      const result = (await res.json()) as Record<string, unknown>;
      // Backpressure is bounded by the requests in flight: a naive script just writes.
      out.write(JSON.stringify({ ...result, ...stamps }) + '\n');
    } catch (err) {
      failed.error ??= err as Error;
    } finally {
      inFlight--;
      wake?.();
    }
  };
  for await (const line of lines(rolloutsPath)) {
    if (!line.trim()) continue;
    const rollout = JSON.parse(line) as Record<string, unknown>;
    const key = `${rollout._ng_task_index}|${rollout._ng_rollout_index}`;
    const input = inputs.get(key);
    if (!input) throw new Error(`no input row for ${key}`);
    const payload = JSON.stringify({ ...input, response: rollout.response });
    const stamps = { _ng_task_index: input._ng_task_index, _ng_rollout_index: input._ng_rollout_index, agent_ref: input.agent_ref };
    while (inFlight >= concurrency) await new Promise<void>((r) => (wake = r));
    if (failed.error) break;
    inFlight++;
    requests++;
    void verify(payload, stamps);
  }
  while (inFlight > 0) await new Promise<void>((r) => (wake = r));
  const endMs = performance.now();
  out.end();
  await once(out, 'finish');
  if (failed.error) throw failed.error;
  return { startMs, endMs, requests, non200, loadMs };
}
