/**
 * The first phases of an ATIF run (`--input-format atif`), in NeMo Gym 0.7.0's order: plan (the
 * manifest, its trajectories and the materialized inputs), the preflight (stateless verifiers, MCP
 * exposure), then the output paths are prepared and opened. There is no reverify-mode guard and no
 * `unsafe_` prefix: the preflight refuses what the guard would let `--force` through. A refusal
 * after the plan removes what the plan created, so a refused run leaves nothing behind.
 * Old histories never have an ATIF spec, so these activities never meet a recorded gym run.
 */
import { CancellationScope } from '@temporalio/workflow';
import { atifPlanning } from '../src/contract/atif-messages.js';
import type { OutputPaths, PlanSummary, RunSpec } from '../src/contract/run-spec.js';
import { cleanup, long, quick } from './activity-proxies.js';
import { prepare } from './first-phases.js';
import { setFirstPlan, type RunState } from './run-state.js';

/** Plan, preflight and prepare of an ATIF run; returns the outputs to open, the plan and its messages. */
export async function atifFirstPhases(
  spec: RunSpec,
  st: RunState,
): Promise<{ outputs: OutputPaths; plan: PlanSummary; messages: string[] }> {
  const atif = spec.atif!;
  st.phase = 'plan';
  st.messages.push(atifPlanning());
  const { messages, preflight, workDir, createdDir, ...plan } = await long.planAtif.executeWithOptions(
    { summary: 'plan: ATIF manifest, trajectories and materialized inputs' },
    [
      {
        inputsPath: spec.inputsPath,
        manifestPath: atif.manifestPath,
        outputPath: spec.outputPath,
        overwrite: spec.overwrite,
        routing: spec.routing,
        limit: spec.limit,
      },
    ],
  );
  let outputs: OutputPaths;
  try {
    st.phase = 'guard';
    await quick.atifPreflight.executeWithOptions({ summary: 'preflight: stateless verifiers, MCP exposure of tool calls' }, [
      { facts: preflight, serverUrls: spec.routing.servers, mcpExposure: atif.mcpExposure, timeoutMs: 30_000 },
    ]);
    outputs = await prepare(spec, st, '');
  } catch (err) {
    await CancellationScope.nonCancellable(() =>
      cleanup.discardPlan.executeWithOptions({ summary: 'refused: remove what the plan created' }, [workDir, createdDir]),
    );
    throw err;
  }
  setFirstPlan(st, plan);
  return { outputs, plan, messages };
}
