/**
 * ATIF v1.7 trajectories made from a sample run's rollouts (sample-data.ts), for demos and tests of
 * `--input-format atif`: one file per rollout (`<dir>/<task>-<rollout>.json`: the question as a user
 * step, the answer as an agent step with its reasoning and token counts) and the manifest joining
 * each file to its materialized input, pinned by SHA-256 (`<dir>/manifest.jsonl`). Streamed: one
 * rollout in memory at a time.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';

export interface AtifSample {
  manifestPath: string;
  trajectories: number;
}

interface SampleRollout {
  _ng_task_index: number;
  _ng_rollout_index: number;
  agent_ref: { name: string };
  responses_create_params: { input: Array<{ content: string }> };
  response: {
    created_at: number;
    model: string;
    output: Array<{ type: string; summary?: Array<{ text: string }>; content?: Array<{ text: string }> }>;
    usage: { input_tokens: number; output_tokens: number; output_tokens_details: { reasoning_tokens: number } };
  };
}

/** The ATIF document of one sample rollout. */
export function sampleTrajectory(r: SampleRollout, sessionId: string): Record<string, unknown> {
  const { response, _ng_task_index: task, _ng_rollout_index: rollout } = r;
  const reasoning = response.output.find((o) => o.type === 'reasoning')?.summary?.[0]?.text;
  const answer =
    response.output
      .find((o) => o.type === 'message')
      ?.content?.map((c) => c.text)
      .join('\n') ?? '';
  const u = response.usage;
  return {
    schema_version: 'ATIF-v1.7',
    session_id: sessionId,
    trajectory_id: `${sessionId}:${task}:${rollout}`,
    agent: { name: r.agent_ref.name, version: '1.0', model_name: response.model },
    steps: [
      { step_id: 1, source: 'user', message: r.responses_create_params.input[0].content },
      {
        step_id: 2,
        source: 'agent',
        timestamp: new Date(response.created_at * 1000).toISOString(),
        ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
        message: answer,
        metrics: {
          prompt_tokens: u.input_tokens,
          completion_tokens: u.output_tokens,
          extra: { reasoning_tokens: u.output_tokens_details.reasoning_tokens },
        },
      },
    ],
    final_metrics: { total_prompt_tokens: u.input_tokens, total_completion_tokens: u.output_tokens, total_steps: 2 },
    extra: { nemo_gym: { source: { task_index: task, rollout_index: rollout } } },
  };
}

/** Writes the trajectories of every rollout of `rolloutsPath` and their manifest into `dir`. */
export async function writeAtifSample(dir: string, rolloutsPath: string, sessionId = 'reverify-demo'): Promise<AtifSample> {
  await mkdir(dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.jsonl');
  const manifest = await open(manifestPath, 'w');
  let trajectories = 0;
  try {
    for await (const line of jsonlLines(rolloutsPath)) {
      if (isBlank(line.text)) continue;
      const r = JSON.parse(line.text) as SampleRollout;
      const name = `${r._ng_task_index}-${r._ng_rollout_index}.json`;
      const bytes = JSON.stringify(sampleTrajectory(r, sessionId), null, 2) + '\n';
      await writeFile(join(dir, name), bytes);
      const sha = createHash('sha256').update(bytes).digest('hex');
      await manifest.write(
        JSON.stringify({
          trajectory_path: name,
          _ng_task_index: r._ng_task_index,
          _ng_rollout_index: r._ng_rollout_index,
          expected_sha256: sha,
        }) + '\n',
      );
      trajectories++;
    }
  } finally {
    await manifest.close();
  }
  return { manifestPath, trajectories };
}
