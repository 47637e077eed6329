/**
 * Routing one row, apart from building the table (routing.ts, which parses the gym config's YAML):
 * the plan's thread imports this alone.
 */
import { ConfigError } from '../contract/errors.js';
import { unknownAgent } from '../contract/messages.js';
import type { RoutingTable } from '../contract/routing-table.js';
import type { RowRoute } from '../contract/row-route.js';

/**
 * The resources server of one row (NeMo Gym 0.7.0 `_rs_for_row`): a `task_source` naming a
 * resources-server block wins; else an environment-server stamp naming an environment server whose
 * implementation names a resources server; else the agent table; else the catch-all; else
 * `ConfigError` "cannot find a resources server for row (...)". Use the same function for `/verify`
 * and `/aggregate_metrics`, on the `rowRouteOf` of the row as sent (payload) or as written (output).
 */
export function resolveServer(t: RoutingTable, row: RowRoute): string {
  const { agent, taskSource, environmentServer } = row;
  if (taskSource !== undefined && t.taskSources.includes(taskSource)) return taskSource;
  const environments = t.environmentServers ?? {};
  if (environmentServer !== undefined && Object.hasOwn(environments, environmentServer)) return environments[environmentServer];
  if (agent !== undefined && Object.hasOwn(t.agents, agent)) return t.agents[agent];
  if (t.catchAll !== null) return t.catchAll;
  throw new ConfigError(unknownAgent(agent, taskSource, Object.keys(t.agents)));
}
