/**
 * Memory and time of the upload's `rollouts.json` table (src/upload/rollouts-table.ts) on a large
 * main output: `npx tsx bench/upload-table.ts [--rows N]` (default 1,000,000) writes N rows in
 * shuffled key order, each with an `ng_trajectory` and a captured call to strip, then writes the
 * table and prints rows/s, the peak RSS and the sizes. The table is not uploaded.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRolloutsTable } from '../src/upload/rollouts-table.js';

const at = process.argv.indexOf('--rows');
const rows = at > 0 ? Number(process.argv[at + 1]) : 1_000_000;
const dir = await mkdtemp(join(tmpdir(), 'reverify-bench-upload-'));
try {
  const output = join(dir, 'out.jsonl');
  const out = createWriteStream(output);
  // A permutation of 0..rows-1 (multiplicative, so no array of N numbers is needed).
  const step = 7_368_787;
  for (let i = 0; i < rows; i++) {
    const k = (i * step) % rows;
    const line =
      `{"_ng_task_index":${Math.floor(k / 4)},"_ng_rollout_index":${k % 4},"agent_ref":{"name":"agent_${k % 2}"},"reward":${k % 3 === 0 ? '1.0' : '0.0'},` +
      `"response":{"output_text":"answer ${k} é"},"ng_trajectory":{"steps":[{"k":${k}}]},` +
      `"ng_model_call_capture":{"calls":[{"id":"c${k}","request":{"x":1},"response":{"y":2},"latency_ms":12}]}}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = Date.now();
  const n = await writeRolloutsTable(output, join(dir, 'rollouts.json'), dir);
  const seconds = (Date.now() - started) / 1000;
  clearInterval(timer);
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `${n} rows in ${seconds.toFixed(1)} s (${Math.round(n / seconds)} rows/s); peak RSS ${mb(peak)}; ` +
      `main output ${mb((await stat(output)).size)}, rollouts.json ${mb((await stat(join(dir, 'rollouts.json'))).size)}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
