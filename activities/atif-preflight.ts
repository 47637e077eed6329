import { atifNeedsStateless, mcpToolCallsRefused } from '../src/contract/atif-messages.js';
import { ConfigError } from '../src/contract/errors.js';
import { guardOffenders, type ReverifyMode } from '../src/contract/reverify-mode.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import type { AtifPreflightFacts } from './plan-atif.js';
import { failFastOnUserError } from './user-errors.js';

export interface AtifPreflightRequest {
  facts: AtifPreflightFacts;
  /** Base URL of every resources server of the routing table. */
  serverUrls: Record<string, string>;
  /** Each server's MCP exposure from the config, or the config problem reading it (spec `atif.mcpExposure`). */
  mcpExposure: Record<string, boolean | string>;
  timeoutMs: number;
}

/**
 * The ATIF preflight (NeMo Gym 0.7.0's `_guard_atif_preflight`), after the plan and before any output
 * path is prepared: every selected row routes to a resources server; each server the rows route to
 * answers `stateless` on `GET /reverify_mode` (there is no `--force` in ATIF mode); and no row with
 * function calls goes to a server that exposes its tools over MCP. The first failure stops the run.
 */
export function atifPreflight(deps: ActivityDeps) {
  return (req: AtifPreflightRequest): Promise<void> =>
    failFastOnUserError(() =>
      whileHeartbeating(async () => {
        const { servers, functionCallServers, unroutable } = req.facts;
        if (unroutable !== null) throw new ConfigError(unroutable);
        const client = deps.verifier(req.timeoutMs);
        const modes: Record<string, ReverifyMode> = {};
        for (const name of servers) modes[name] = await client.reverifyMode(name, req.serverUrls[name]);
        const offenders = guardOffenders(modes);
        if (offenders.length > 0) throw new ConfigError(atifNeedsStateless(offenders));
        for (const name of functionCallServers) {
          const exposure = req.mcpExposure[name];
          if (typeof exposure === 'string') throw new ConfigError(exposure);
          if (exposure) throw new ConfigError(mcpToolCallsRefused(name));
        }
      }),
    );
}
