/**
 * A small MLflow tracking client over MLflow's REST API (there is no official TypeScript client):
 * experiments, runs, batched metrics/params/tags, and artifacts uploaded through the tracking
 * server's artifact proxy (`mlflow server --serve-artifacts`, the default since MLflow 2).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { fetch } from 'undici';
import { redactUserinfo } from '../contract/secrets.js';
import { splitCredentials } from '../verifier/credentials.js';

/** MLflow's batch limits (`mlflow.utils.validation`). */
export const MAX_METRICS_PER_BATCH = 1000;
export const MAX_PARAMS_TAGS_PER_BATCH = 100;

/** A reply of the tracking server that is not 2xx: its status and MLflow's error text. */
export class MlflowHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'MlflowHttpError';
  }
}

export interface RunInfo {
  runId: string;
  experimentId: string;
  artifactUri: string;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class MlflowClient {
  /** The URI requests go to: without its userinfo (`fetch` refuses a URL with credentials). */
  private readonly base: string;
  /** The URI as messages show it (`http://***@host:port`). */
  private readonly shown: string;
  private readonly authorization: string | null;

  /**
   * A `user:password@` in `trackingUri` is sent as HTTP Basic auth, else `token` as a Bearer token
   * (as Python's MLflow client over `requests` does: the URL's credentials win).
   */
  constructor(trackingUri: string, token: string | null) {
    const { url, authorization } = splitCredentials(trackingUri, 'mlflow_tracking_uri');
    this.base = url.replace(/\/+$/, '');
    this.shown = redactUserinfo(trackingUri.replace(/\/+$/, ''));
    this.authorization = authorization ?? (token ? `Bearer ${token}` : null);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.authorization !== null ? { authorization: this.authorization } : {}), ...extra };
  }

  /** `fetch`, its transport errors said as one line naming the server. */
  private async reach(url: string, init: Parameters<typeof fetch>[1]): Promise<Awaited<ReturnType<typeof fetch>>> {
    try {
      return await fetch(url, init);
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new Error(`cannot reach the MLflow tracking server ${this.shown}: ${cause}`);
    }
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = `${this.base}/api/2.0/mlflow/${path}`;
    const res = await this.reach(url, {
      method,
      headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new MlflowHttpError(res.status, `${method} ${path}: HTTP ${res.status}: ${errorText(text)}`);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** The id of the experiment named `name`, created when missing (a lost create race reads it again). */
  async experimentId(name: string): Promise<string> {
    const found = await this.findExperiment(name);
    if (found !== null) return found;
    try {
      return (await this.call<{ experiment_id: string }>('POST', 'experiments/create', { name })).experiment_id;
    } catch (err) {
      const again = await this.findExperiment(name);
      if (again === null) throw err;
      return again;
    }
  }

  private async findExperiment(name: string): Promise<string | null> {
    try {
      const r = await this.call<{ experiment: { experiment_id: string } }>(
        'GET',
        `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
      );
      return r.experiment.experiment_id;
    } catch (err) {
      if (err instanceof MlflowHttpError && err.status === 404) return null;
      throw err;
    }
  }

  async createRun(experimentId: string, runName: string): Promise<RunInfo> {
    const r = await this.call<{ run: { info: { run_id: string; experiment_id: string; artifact_uri: string } } }>('POST', 'runs/create', {
      experiment_id: experimentId,
      run_name: runName,
      start_time: Date.now(),
      user_id: userInfo().username,
    });
    const info = r.run.info;
    return { runId: info.run_id, experimentId: info.experiment_id, artifactUri: info.artifact_uri };
  }

  async getRun(runId: string): Promise<RunInfo & { tags: Record<string, string> }> {
    const r = await this.call<{
      run: {
        info: { run_id: string; experiment_id: string; artifact_uri: string };
        data: { tags?: Array<{ key: string; value: string }> };
      };
    }>('GET', `runs/get?run_id=${encodeURIComponent(runId)}`);
    const tags = Object.fromEntries((r.run.data.tags ?? []).map((t) => [t.key, t.value]));
    return { runId: r.run.info.run_id, experimentId: r.run.info.experiment_id, artifactUri: r.run.info.artifact_uri, tags };
  }

  /** Logs metrics (step 0, one timestamp), then tags, then params, in MLflow's batch sizes. */
  async logBatch(
    runId: string,
    items: { metrics?: Array<[string, number]>; tags?: Array<[string, string]>; params?: Array<[string, string]> },
  ): Promise<void> {
    const timestamp = Date.now();
    for (const batch of chunks(items.metrics ?? [], MAX_METRICS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', {
        run_id: runId,
        metrics: batch.map(([key, value]) => ({ key, value, timestamp, step: 0 })),
      });
    for (const batch of chunks(items.tags ?? [], MAX_PARAMS_TAGS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, tags: batch.map(([key, value]) => ({ key, value })) });
    for (const batch of chunks(items.params ?? [], MAX_PARAMS_TAGS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, params: batch.map(([key, value]) => ({ key, value })) });
  }

  async setTag(runId: string, key: string, value: string): Promise<void> {
    await this.call('POST', 'runs/set-tag', { run_id: runId, key, value });
  }

  async finishRun(runId: string): Promise<void> {
    await this.call('POST', 'runs/update', { run_id: runId, status: 'FINISHED', end_time: Date.now() });
  }

  /** The proxied-artifact URL of `name` in the run's artifact directory; only `mlflow-artifacts:` URIs are served so. */
  artifactUrl(run: RunInfo, name: string): string {
    const m = /^mlflow-artifacts:(?:\/\/[^/]*)?(\/.*)$/.exec(run.artifactUri);
    if (!m)
      throw new Error(
        `the run's artifact store is ${run.artifactUri}, which the tracking server does not proxy: ` +
          `start \`mlflow server\` with --serve-artifacts (and an experiment created since)`,
      );
    const path = m[1].replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
    return `${this.base}/api/2.0/mlflow-artifacts/artifacts/${path}/${encodeURIComponent(name)}`;
  }

  /** Uploads a file (streamed) as the run's artifact `name`. */
  async uploadArtifactFile(run: RunInfo, name: string, file: string): Promise<void> {
    const size = (await stat(file)).size;
    const res = await this.reach(this.artifactUrl(run, name), {
      method: 'PUT',
      headers: this.headers({ 'content-type': 'application/json', 'content-length': String(size) }),
      body: createReadStream(file),
      duplex: 'half',
    });
    const text = await res.text();
    if (!res.ok) throw new MlflowHttpError(res.status, `PUT artifact ${name}: HTTP ${res.status}: ${errorText(text)}`);
  }

  /** Uploads text as the run's artifact `name`. */
  async uploadArtifactText(run: RunInfo, name: string, body: string): Promise<void> {
    const res = await this.reach(this.artifactUrl(run, name), { method: 'PUT', headers: this.headers(), body });
    const text = await res.text();
    if (!res.ok) throw new MlflowHttpError(res.status, `PUT artifact ${name}: HTTP ${res.status}: ${errorText(text)}`);
  }
}

/** MLflow's `{error_code, message}` as one short line, else the start of the body. */
function errorText(body: string): string {
  try {
    const e = JSON.parse(body) as { error_code?: string; message?: string };
    if (e.message) return `${e.error_code ?? 'error'}: ${e.message}`.split('\n')[0].slice(0, 300);
  } catch {
    // not JSON
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, 300) || 'empty reply';
}
