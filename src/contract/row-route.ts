/**
 * What routes a row to its resources server and names the run it belongs to (NeMo Gym 0.7.0's
 * `_rs_for_row`, `rollout_run_key`, `label_runs`): `agent_ref.name`, `task_source` and the
 * environment-server stamp `_ng_environment_server`, each read only when it is a string.
 */
import { AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, TASK_SOURCE_KEY } from './keys.js';

/** A row's routing fields (absent: missing, or not a string). */
export interface RowRoute {
  agent?: string;
  taskSource?: string;
  environmentServer?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The routing fields of a parsed row. */
export function rowRouteOf(row: Record<string, unknown>): RowRoute {
  const ref = row[AGENT_REF_KEY];
  const route: RowRoute = {};
  const agent = typeof ref === 'object' && ref !== null ? str((ref as Record<string, unknown>).name) : undefined;
  const taskSource = str(row[TASK_SOURCE_KEY]);
  const environmentServer = str(row[ENVIRONMENT_SERVER_KEY]);
  if (agent !== undefined) route.agent = agent;
  if (taskSource !== undefined) route.taskSource = taskSource;
  if (environmentServer !== undefined) route.environmentServer = environmentServer;
  return route;
}

/**
 * What ran a rollout, for grouping (`rollout_run_key`): its environment server, else its agent's
 * name; undefined when it has neither (aggregation leaves such a row out).
 */
export function runKeyOf(route: RowRoute): string | undefined {
  return route.environmentServer ?? route.agent;
}

/** The agent that acted in a rollout, for progress and messages (`rollout_agent_label`): agent name, else environment server. */
export function agentLabelOf(route: RowRoute): string | undefined {
  return route.agent ?? route.environmentServer;
}

/**
 * The label of each run key (`label_runs`): the agent's name when that name belongs to exactly one
 * run key, else the key itself; a label that would still repeat (a server named like another run's
 * agent) falls back to its key too. Every label is unique; the result does not depend on map order.
 * `agentByKey`: each run key's agent name (of its first row in key order), undefined when it has none.
 */
export function labelRuns(agentByKey: ReadonlyMap<string, string | undefined>): Map<string, string> {
  const keysOfAgent = new Map<string, number>();
  for (const agent of agentByKey.values()) if (agent !== undefined) keysOfAgent.set(agent, (keysOfAgent.get(agent) ?? 0) + 1);
  const labels = new Map<string, string>();
  for (const [key, agent] of agentByKey) labels.set(key, agent !== undefined && keysOfAgent.get(agent) === 1 ? agent : key);
  for (;;) {
    const counts = new Map<string, number>();
    for (const label of labels.values()) counts.set(label, (counts.get(label) ?? 0) + 1);
    const clashing = [...labels].filter(([key, label]) => counts.get(label)! > 1 && label !== key).map(([key]) => key);
    if (clashing.length === 0) return labels;
    for (const key of clashing) labels.set(key, key);
  }
}
