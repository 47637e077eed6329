/**
 * Writes a realistic run for benchmarks:
 *
 *   npx tsx bench/generate.ts --dir D --rows N [--response-bytes B] [--agents 2] [--repeats 4] [--seed 1]
 *
 * D gets `rollouts_materialized_inputs.jsonl`, `rollouts.jsonl` (shuffled completion order) and
 * `gym_config.yaml` (agents routed to `mcqa_resources_server` on 127.0.0.1:8000; point a run at
 * another server with `--server mcqa_resources_server=http://127.0.0.1:PORT`). Files are streamed,
 * so 10^6 rows at 50 KB fit in little memory (but not in little disk: about rows × B bytes).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mib, parseCount, writeRunFiles } from './lib/data.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    rows: { type: 'string' },
    'response-bytes': { type: 'string', default: '20000' },
    agents: { type: 'string', default: '2' },
    repeats: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
  },
});
if (!values.dir || !values.rows) {
  process.stderr.write('usage: npx tsx bench/generate.ts --dir D --rows N [--response-bytes B] [--agents 2] [--repeats 4] [--seed 1]\n');
  process.exit(1);
}
const files = await writeRunFiles(resolve(values.dir), {
  rows: parseCount('--rows', values.rows),
  responseBytes: parseCount('--response-bytes', values['response-bytes']),
  agents: parseCount('--agents', values.agents),
  repeats: parseCount('--repeats', values.repeats),
  seed: Number(values.seed),
});
console.log(`rows:      ${files.rows} (${files.tasks} tasks × ${files.repeats} repeats, agents ${files.agents.join(', ')})`);
console.log(`inputs:    ${files.inputsPath}  ${mib(files.inputsBytes)} (${Math.round(files.inputsBytes / files.rows)} B/row)`);
console.log(`rollouts:  ${files.rolloutsPath}  ${mib(files.rolloutsBytes)} (${Math.round(files.rolloutsBytes / files.rows)} B/row)`);
console.log(`config:    ${files.configPath}  (resources server 'mcqa_resources_server' at 127.0.0.1:8000)`);
console.log(
  `seconds:   ${files.seconds.toFixed(2)} (${Math.round(files.rows / files.seconds)} rows/s, ${mib((files.inputsBytes + files.rolloutsBytes) / files.seconds)}/s)`,
);
