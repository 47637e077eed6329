import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { InputFormat } from '../contract/atif-messages.js';
import { writeAtifSample } from '../demo/atif-sample.js';
import { sampleGymConfigYaml, writeSampleData } from '../demo/sample-data.js';
import { startReferenceServer } from '../reference-server/server.js';
import { resolveTemporal, type TemporalTarget } from '../temporal/connection.js';
import { defaultIo, runCommand, type RunProcessOptions } from './run-command.js';

const AGENTS = ['mcqa_simple_agent', 'mcqa_reasoning_agent'];
const RESOURCES_SERVER = 'mcqa_resources_server';

/**
 * `reverify demo`: writes a sample run (two agents, one resources server, a few hundred rollouts),
 * starts the reference resources server with a few simulated judge failures, and re-verifies it
 * with `reverify run` on the embedded defaults.
 */
export async function demoCommand(
  opts: { dir: string; tasks: number; repeats: number; inputFormat?: InputFormat },
  proc: RunProcessOptions,
): Promise<void> {
  const dir = resolve(opts.dir);
  const data = await writeSampleData(dir, { tasks: opts.tasks, repeats: opts.repeats, agents: AGENTS, seed: 7 });
  // `--input-format atif`: the same rollouts as ATIF v1.7 trajectories, joined to the inputs by a manifest.
  const atif = opts.inputFormat === 'atif' ? await writeAtifSample(join(dir, 'atif'), data.rolloutsPath) : null;
  const server = await startReferenceServer({ port: 0, latencyMs: 5, judgeFailRate: 0.03, seed: 7 });
  try {
    const configPath = join(dir, 'gym_config.yaml');
    await writeFile(
      configPath,
      sampleGymConfigYaml({ resourcesServer: RESOURCES_SERVER, host: '127.0.0.1', port: server.port, agents: AGENTS }),
    );
    const output = join(dir, 'reverified.jsonl');
    defaultIo.out(`Demo data: ${data.rows} rollouts in ${data.rolloutsPath}`);
    if (atif) defaultIo.out(`ATIF v1.7: ${atif.trajectories} trajectories, manifest ${atif.manifestPath}`);
    defaultIo.out(`Reference resources server '${RESOURCES_SERVER}' at ${server.url} (3% simulated judge failures)`);
    const source = atif ? `--input-format atif --atif-manifest ${atif.manifestPath}` : `--rollouts ${data.rolloutsPath}`;
    defaultIo.out(
      `$ reverify run --inputs ${data.inputsPath} ${source} --output ${output} --config ${configPath} --concurrency 16 --overwrite --rejudge-delay 2`,
    );
    await runCommand(
      // Judge failures are re-judged automatically after a short durable timer (default: a minute).
      {
        inputs: data.inputsPath,
        ...(atif ? { inputFormat: 'atif', atifManifest: atif.manifestPath } : { rollouts: data.rolloutsPath }),
        output,
        configs: [configPath],
        concurrency: 16,
        overwrite: true,
        rejudgeDelayMs: 2000,
      },
      proc,
    );
    const stats = server.stats();
    defaultIo.out(`Reference server: ${JSON.stringify(stats.requests)} requests, peak ${stats.peak_verify_in_flight} /verify in flight`);
    const line = devServerLine(await resolveTemporal());
    if (line) defaultIo.out(line);
  } finally {
    await server.close();
  }
}

/** The embedded dev server outlives the demo (it holds the run's history): say so, and how to stop it. */
export function devServerLine(target: TemporalTarget): string | null {
  if (!target.embedded) return null;
  const ui = target.uiUrl ? ` (UI ${target.uiUrl})` : '';
  return `The Temporal dev server at ${target.address}${ui} keeps running with the run's history; stop it with \`reverify server stop\`.`;
}
