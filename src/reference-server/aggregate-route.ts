import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AggregateMetrics, MetricsAggregator } from './aggregate.js';
import { streamJsonText } from './http-util.js';
import { VerifyResponsesParser } from './verify-responses-parser.js';

/** The answer's JSON text in pieces: one per group, so it is never built as one string. */
function* answerPieces(metrics: AggregateMetrics): Generator<string> {
  yield '{"group_level_metrics":[';
  let separator = '';
  for (const group of metrics.group_level_metrics) {
    yield separator + JSON.stringify(group);
    separator = ',';
  }
  yield `],"agent_metrics":${JSON.stringify(metrics.agent_metrics)}`;
  yield `,"key_metrics":${JSON.stringify(metrics.key_metrics)}`;
  yield `,"repeat_level_metrics":${JSON.stringify(metrics.repeat_level_metrics)}}`;
}

/**
 * The `POST /aggregate_metrics` handler: streams `{"verify_responses": [...]}` through the default
 * aggregation and streams `{group_level_metrics, agent_metrics, key_metrics, repeat_level_metrics}` back. Throws
 * `RequestValidationError` (422) or `AggregationError` (500) — after the whole body was read, so
 * the client can always read the answer.
 */
export async function handleAggregateMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const aggregator = new MetricsAggregator();
  const parser = new VerifyResponsesParser((element) => aggregator.add(element));
  let failure: Error | undefined;
  for await (const chunk of req) {
    if (failure !== undefined) continue; // drain the rest of the body
    try {
      parser.push(chunk as Buffer);
    } catch (error) {
      failure = error as Error;
    }
  }
  if (failure !== undefined) throw failure;
  parser.end();
  await streamJsonText(res, 200, answerPieces(aggregator.result()));
}
