/**
 * The plan's reading of one materialized inputs row (spec §4.2, §4.7; NeMo Gym 0.7.0): is it usable,
 * which resources server verifies it, and under which name its progress is counted. The route is
 * read from the row as it is sent to `/verify` (a task row's fields lifted, `task-input.ts`), as
 * 0.7.0 routes the payload.
 */
import { InputError } from '../contract/errors.js';
import { agentLabelOf, rowRouteOf } from '../contract/row-route.js';
import { describeInputRowProblem } from '../contract/row-shapes.js';
import { taskInputProblem, taskRowOf } from '../contract/task-input.js';
import { TASK_INPUT_KEY } from '../contract/keys.js';
import { resolveServer } from '../config/resolve-server.js';
import type { RoutingTable } from '../config/routing.js';

const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The agent label (agent name, else environment server) and resources server of a parsed inputs
 * row whose line is `text`; an unusable or unroutable row is an `InputError` at `where` (`file:line`).
 */
export function routeInputRow(
  row: Record<string, unknown>,
  text: string,
  routing: RoutingTable,
  where: string,
): { agent: string; server: string } {
  const isTaskRow = isObject(row[TASK_INPUT_KEY]);
  const problem = describeInputRowProblem(row, text) ?? (isTaskRow ? taskInputProblem(text) : null);
  if (problem) throw new InputError(`${where}: ${problem}`);
  const route = rowRouteOf(isTaskRow ? (JSON.parse(taskRowOf(text)) as Record<string, unknown>) : row);
  let server: string;
  try {
    server = resolveServer(routing, route);
  } catch (err) {
    throw new InputError(`${where}: ${(err as Error).message}`);
  }
  // The row itself has a name (checked above) even if its task fields replaced agent_ref or the stamp.
  return { agent: agentLabelOf(route) ?? agentLabelOf(rowRouteOf(row))!, server };
}
