/** Routing of rows to resources servers, with their URLs. */
export interface RoutingTable {
  /** Agent instance name -> resources server instance name (from agent blocks). */
  agents: Record<string, string>;
  /**
   * Resources-only config: the single resources server EVERY agent name maps to (typos and stale
   * names are absorbed; print `catchAllWarning` when this is set). `null` otherwise.
   */
  catchAll: string | null;
  /** Resources server instance name -> base URL (`http://host:port`, no trailing slash). */
  servers: Record<string, string>;
  /** Resources server block names: a row whose `task_source` is one of them is routed there directly. */
  taskSources: string[];
  /**
   * Environment server block name -> the resources server its implementation names (NeMo Gym
   * 0.7.0): a row stamped `_ng_environment_server` with one of these names is routed there, unless
   * its `task_source` routes it. Absent in runs started before it existed (read as empty).
   */
  environmentServers?: Record<string, string>;
}
