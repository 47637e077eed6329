/**
 * The phases before the first verify round (first generation only): guard, prepare, (recovery:)
 * move invalid-judge rows, plan, open the outputs, seed. Each is one named call of the main
 * workflow; the activities run in this order.
 */
import { nothingToReverify, planning, recoveryWarning, seededSuccesses, verifyingWith } from '../src/contract/messages.js';
import type { UNSAFE_PREFIX } from '../src/contract/keys.js';
import type { OutputPaths, PlanSummary, RunSpec } from '../src/contract/run-spec.js';
import { long, quick } from './activity-proxies.js';
import { setFirstPlan, type RunState } from './run-state.js';
import { createRunEstimate } from '../src/stats/run-estimate.js';
import { appendParts } from './commit.js';
import { enterPhase } from './details.js';
import { planRequestFor } from './plan-request.js';

type Prefix = '' | typeof UNSAFE_PREFIX;

const rulesOf = (spec: RunSpec) => ({
  overwrite: spec.overwrite,
  resume: spec.resume,
  append: spec.append,
  repairTruncated: spec.repairTruncated,
});

/** `GET /reverify_mode` of every server (spec §4.3); recovery skips it and never prefixes. Returns the output prefix. */
export async function guard(spec: RunSpec, st: RunState): Promise<Prefix> {
  if (spec.judgeFailedOnly) {
    st.messages.push(recoveryWarning());
    return '';
  }
  enterPhase(st, 'guard');
  // Decided by `reverify run` before it started this workflow (its input records it); else one GET per server.
  const guard =
    spec.guarded ??
    (await quick.guardReverifyModes.executeWithOptions({ summary: 'guard: GET /reverify_mode' }, [spec.guardServers, spec.force, 30_000]));
  st.forceWarning = guard.warning;
  if (guard.warning) st.messages.push(guard.warning);
  return guard.prefix;
}

/** The output paths, checked (spec §4.4): writable, not existing unless allowed, never an input. */
export async function prepare(spec: RunSpec, st: RunState, prefix: Prefix): Promise<OutputPaths> {
  enterPhase(st, 'prepare');
  st.outputs = await quick.checkOutputs.executeWithOptions({ summary: 'prepare: check the output paths' }, [
    spec.outputPath,
    prefix,
    rulesOf(spec),
    {
      inputsPath: spec.inputsPath,
      rolloutsPath: spec.rolloutsPath,
      judgeFailedOnly: spec.judgeFailedOnly,
      retryInvalidJudgeResponses: spec.retryInvalidJudgeResponses,
      ...(spec.atif ? { atifManifestPath: spec.atif.manifestPath } : {}),
    },
  ]);
  return st.outputs;
}

/**
 * Recovery with `--retry-invalid-judge-responses` (NeMo Gym 0.7.0): rows of --rollouts flagged
 * `invalid_judge_response` are moved into its sidecar, crash-safely, before the plan reads the pair.
 */
export async function moveInvalidJudgeRows(spec: RunSpec, st: RunState): Promise<void> {
  if (!spec.judgeFailedOnly || !spec.retryInvalidJudgeResponses) return;
  const moved = await long.moveInvalidJudgeRows.executeWithOptions(
    {
      summary: 'recovery: move rows flagged invalid_judge_response into the --rollouts sidecar',
      heartbeatTimeout: Math.min(spec.heartbeatTimeoutMs, 120_000),
    },
    [{ rolloutsPath: spec.rolloutsPath }],
  );
  if (moved.message) st.messages.push(moved.message);
}

/** Every input line checked and joined by key into the first round's plan; its messages are returned for later. */
export async function plan(spec: RunSpec, st: RunState, outputs: OutputPaths): Promise<{ plan: PlanSummary; messages: string[] }> {
  enterPhase(st, 'plan');
  st.messages.push(planning());
  const { messages, ...plan } = await long.planRun.executeWithOptions(
    { summary: spec.judgeFailedOnly ? 'plan: judge failures of the --rollouts sidecar' : 'plan: join inputs and rollouts' },
    [planRequestFor(spec, outputs)],
  );
  setFirstPlan(st, plan);
  return { plan, messages };
}

/**
 * The live paired estimate (docs/statistics.md): its units counted from the plan, before the first
 * batch. Not for recovery (its source is the sidecar: no old rewards) nor without `--confidence`.
 */
export async function planEstimate(spec: RunSpec, st: RunState, plan: PlanSummary): Promise<void> {
  if (spec.confidence === undefined || spec.judgeFailedOnly || plan.rows === 0) return;
  const units = await long.countPairedUnits.executeWithOptions({ summary: 'estimate: count the planned tasks and old rewards' }, [
    {
      plan: {
        planPath: plan.planPath,
        recordBytes: plan.recordBytes,
        sourcePath: plan.sourcePath,
        agents: plan.agents,
        rows: plan.rows,
        ...(plan.files ? { files: plan.files } : {}),
      },
    },
  ]);
  st.estimate = createRunEstimate(units, plan.rows, spec.confidence, spec.order !== 'random');
}

/** Opens the outputs (deleting them for --overwrite, repairing a cut-off line) and records their lengths. */
export async function openOutputs(spec: RunSpec, st: RunState, outputs: OutputPaths): Promise<void> {
  const opened = await quick.openOutputs.executeWithOptions({ summary: 'open the outputs (recorded lengths, a cut-off line repaired)' }, [
    outputs,
    rulesOf(spec),
  ]);
  st.messages.push(...opened.messages);
  st.mainLength = opened.mainLength;
  if (spec.noiseSample) st.mainOpenedAt = opened.mainLength;
  st.sidecarLength = opened.sidecarLength;
  st.sidecarOpenedAt = opened.sidecarLength;
  // Absent in histories recorded before the count existed.
  st.mainRows = opened.mainRows ?? null;
}

/** Recovery (spec §4.6.3): the successes of --rollouts copied into the output and committed. */
export async function seed(spec: RunSpec, st: RunState, outputs: OutputPaths, plan: PlanSummary): Promise<void> {
  if (!spec.judgeFailedOnly) return;
  const seed = await long.seedSuccesses.executeWithOptions({ summary: 'seed: copy the successful rollouts' }, [
    {
      rolloutsPath: spec.rolloutsPath,
      output: outputs.output,
      workDir: outputs.workDir,
      planned: plan.files?.find((f) => f.path === spec.rolloutsPath),
    },
  ]);
  await appendParts(spec, st, [seed.part], [], 'commit seeded successes');
  st.seeded = seed.seeded;
  if (st.mainRows !== null) st.mainRows += seed.seeded;
  st.messages.push(seededSuccesses(seed.seeded, outputs.output));
}

/** What the plan said, then what the verify phase does. */
export function announce(st: RunState, plan: PlanSummary, planMessages: string[]): void {
  st.messages.push(...planMessages);
  st.messages.push(plan.rows === 0 ? nothingToReverify() : verifyingWith(st.concurrency));
}
