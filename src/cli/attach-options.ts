import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { longFlag, RUN_FLAG_LIST } from '../config/run-flags.js';
import type { RunSpec } from '../contract/run-spec.js';

/** The spec field a flag sets, where it differs from the flag's raw key; null: not compared (the output names the run). */
const SPEC_FIELD: Readonly<Record<string, keyof RunSpec | null>> = {
  inputs: 'inputsPath',
  rollouts: 'rolloutsPath',
  output: null,
  configs: 'routing',
  servers: 'routing',
  '--heartbeat-timeout': 'heartbeatTimeoutMs',
  // Drawn afresh by each command unless given: the live run's seed is the one in force.
  orderSeed: null,
  // Its seed too is drawn afresh unless given: the live run's sample is the one in force.
  noiseSample: null,
};

/** A spec value as the user gives it: seconds for the `…Ms` fields. */
function shown(field: string, v: unknown): string {
  if (field.endsWith('Ms') && typeof v === 'number') return String(v / 1000);
  if (field === 'routing') return 'another routing';
  return v === null || v === undefined ? 'none' : JSON.stringify(v);
}

/**
 * The flags whose value in `given` (this command's) differs from the live run's own `run`, as one
 * line, or null when they agree. The run's own options apply: the line says which were not used.
 */
export function differingOptionsLine(given: RunSpec, run: RunSpec): string | null {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const f of RUN_FLAG_LIST) {
    const name = f.key ?? longFlag(f);
    const field = name in SPEC_FIELD ? SPEC_FIELD[name] : (name as keyof RunSpec);
    if (field === null || !(field in given) || seen.has(field)) continue;
    seen.add(field);
    const [a, b] = [given[field], run[field]];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    const flag = field === 'routing' ? '--config/--server' : longFlag(f);
    parts.push(field === 'routing' ? flag : `${flag} (run: ${shown(field, b)}, given: ${shown(field, a)})`);
  }
  return parts.length > 0 ? `Options that differ from the live run's own, which it keeps: ${parts.join(', ')}.` : null;
}

/** The live run's spec: its first argument, from the first event of its current run's history; null if unreadable. */
export async function liveRunSpec(handle: WorkflowHandle): Promise<RunSpec | null> {
  try {
    const { history } = await handle.client.workflowService.getWorkflowExecutionHistory({
      namespace: handle.client.options.namespace,
      execution: { workflowId: handle.workflowId },
      maximumPageSize: 1,
    });
    const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    return payload ? defaultPayloadConverter.fromPayload<RunSpec>(payload) : null;
  } catch {
    return null;
  }
}
