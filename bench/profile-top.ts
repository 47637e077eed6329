/**
 * Self time by area and by function of `node --cpu-prof` output:
 *
 *   npx tsx bench/profile-top.ts <file.cpuprofile | dir> … [--top 25]
 *
 * A directory means every `.cpuprofile` in it (e.g. the main thread and the workflow thread of a
 * worker); their times are added.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { describeProfiles } from './lib/cpuprofile.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const files = positionals.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(p, f))
    : [p],
);
if (files.length === 0) {
  process.stderr.write('usage: npx tsx bench/profile-top.ts <file.cpuprofile | dir> … [--top 25]\n');
  process.exit(1);
}
console.log(describeProfiles(files, Number(values.top)));
