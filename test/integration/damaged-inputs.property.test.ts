/**
 * Property: whatever damage an input file takes — truncation, swapped or moved lines, changed
 * bytes, a duplicated line, invalid UTF-8, a line replaced by another key's line of the same length
 * and the same CRC-32 (its padding forged) — before the run or between its plan and the batches
 * that read the rows, `reverify run` either stops with one clear line (exit 1, naming the file)
 * having written nothing wrong, or writes exactly the rows the files call for: before the run,
 * those of the damaged files; after the plan, those of the undamaged files. And an `-o` whose base
 * name is near the file system's limit of 255 bytes either runs or is refused with one line naming
 * the path and the limit, having written nothing.
 *
 * Seed and case count: `REVERIFY_DAMAGE_SEED` (default 20261201), `REVERIFY_DAMAGE_RUNS` (default
 * 24 here; `npm run test:damage` runs 300). A failure prints the seed and the shrunk case.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { damageArb, damaged, FORGE_PAD } from '../helpers/damage.js';
import { openForFile } from '../helpers/hooks.js';
import { runInProcess } from '../helpers/run-fixtures.js';
import { startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { inputLine, successLine } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('damage');

const SEED = Number(process.env.REVERIFY_DAMAGE_SEED ?? 20261201);
const RUNS = Number(process.env.REVERIFY_DAMAGE_RUNS ?? 24);
/** One case's run normally takes about a second. */
const CASE_LIMIT_MS = 30_000;

/** Held requests wait for this; `answered` counts the requests answered since the last `arm`. */
const gate = {
  open: Infinity,
  answered: 0,
  release: () => undefined as void,
  held: Promise.resolve(),
  heldNow: () => undefined as void,
  wait: Promise.resolve(),
};

function arm(open: number): void {
  gate.open = open;
  gate.answered = 0;
  gate.wait = new Promise<void>((r) => (gate.release = r));
  gate.held = new Promise<void>((r) => (gate.heldNow = r));
}

/** Echoes the whole payload with a reward: each output row shows exactly what was sent for its key. */
const server = openForFile(
  () =>
    startScriptedServer({
      verify: async (row: Row): Promise<Reply> => {
        if (gate.answered >= gate.open) {
          gate.heldNow();
          await gate.wait;
        }
        gate.answered++;
        return { status: 200, body: { ...row, reward: 1.0 } };
      },
    }),
  (s) => s.close(),
);

const keyOfRow = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;

/**
 * The rows a correct run writes for these files (as parsed objects), or null where the files are
 * not a valid run (the run must then stop with an error). The inputs' last row of a key wins; a
 * rollout key seen before is skipped (the first is verified).
 */
function expectedRows(inputs: Buffer, rollouts: Buffer): Row[] | null {
  const parse = (buf: Buffer): Row[] | null => {
    const text = buf.toString('utf8');
    if (Buffer.from(text, 'utf8').compare(buf) !== 0) return null; // invalid UTF-8
    const rows: Row[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const row = JSON.parse(line) as unknown;
        if (typeof row !== 'object' || row === null || Array.isArray(row)) return null;
        rows.push(row as Row);
      } catch {
        return null;
      }
    }
    return rows;
  };
  const ins = parse(inputs);
  const outs = parse(rollouts);
  if (ins === null || outs === null) return null;
  const byKey = new Map(ins.map((r) => [keyOfRow(r), r]));
  const seen = new Set<string>();
  const rows: Row[] = [];
  for (const r of outs) {
    const k = keyOfRow(r);
    if (seen.has(k)) continue;
    seen.add(k);
    const input = byKey.get(k);
    if (!input) return null;
    rows.push({ ...input, response: r.response, reward: 1.0 });
  }
  return rows;
}

const sortedByKey = (rows: Row[]) => [...rows].sort((a, b) => (keyOfRow(a) < keyOfRow(b) ? -1 : keyOfRow(a) > keyOfRow(b) ? 1 : 0));

function readOutput(path: string): Row[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row);
}

describe('damaged input files (property)', () => {
  it(
    `never writes a wrong row: one clear error, or the rows the files call for (seed ${SEED}, ${RUNS} cases)`,
    { timeout: 60_000 + RUNS * CASE_LIMIT_MS },
    async () => {
      const rs = server();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 3, max: 12 }),
          fc.constantFrom('inputs' as const, 'rollouts' as const),
          fc.constantFrom('before-run' as const, 'after-plan' as const),
          damageArb,
          fc.nat(),
          fc.nat(),
          async (keys, target, when, damage, order, openAt) => {
            const dir = tempDir('reverify-damage-');
            const specs = Array.from({ length: keys }, (_, i) => ({ t: 10 + (i >> 1), r: i & 1 }));
            // The rollouts in a shuffled order (the inputs in key order), so line numbers differ.
            const rolled = specs
              .map((s, i) => ({ s, k: (i * 7919 + order) % 104_729 }))
              .sort((a, b) => a.k - b.k)
              .map((x) => x.s);
            const pad = damage.kind === 'forged-crc' ? FORGE_PAD : '';
            const original = {
              inputs: Buffer.from(specs.map((s) => inputLine(s) + pad).join('\n') + '\n'),
              rollouts: Buffer.from(rolled.map((s) => successLine(s) + pad).join('\n') + '\n'),
            };
            const paths = { inputs: join(dir, 'inputs.jsonl'), rollouts: join(dir, 'rollouts.jsonl') };
            const output = join(dir, 'out.jsonl');
            writeFileSync(paths.inputs, original.inputs);
            writeFileSync(paths.rollouts, original.rollouts);
            const broken = damaged(original[target], damage);
            if (when === 'before-run') writeFileSync(paths[target], broken);
            arm(when === 'after-plan' ? openAt % keys : Infinity);
            const running = runInProcess({
              inputs: paths.inputs,
              rollouts: paths.rollouts,
              output,
              servers: [`rs=${rs.url}`],
              batchSize: 2,
              concurrency: 1,
              maxAttempts: 1,
              disableAggregation: true,
            });
            if (when === 'after-plan') {
              // Damage the file while a batch waits for its answer (the plan has been written).
              await Promise.race([gate.held, running]);
              writeFileSync(paths[target], broken);
              gate.release();
            }
            // A run that never ends (retrying a row it cannot read, say) is a failure too.
            const ended = await Promise.race([running, new Promise<null>((r) => setTimeout(() => r(null), CASE_LIMIT_MS).unref())]);
            if (ended === null) throw new Error(`the run did not end within ${CASE_LIMIT_MS / 1000} s`);
            const { error } = ended;
            const written = readOutput(output);
            const want =
              when === 'before-run'
                ? expectedRows(target === 'inputs' ? broken : original.inputs, target === 'rollouts' ? broken : original.rollouts)
                : expectedRows(original.inputs, original.rollouts);
            if (error) {
              expect(error.code).toBe(1);
              expect(error.line).not.toContain('\n');
              expect(error.line).toContain(dir); // names the file
              // Nothing wrong was written: every committed row is one the undamaged (or, before the
              // run, the damaged) files call for.
              const allowed = new Map((want ?? expectedRows(original.inputs, original.rollouts)!).map((r) => [keyOfRow(r), r]));
              for (const row of written) expect(row).toEqual(allowed.get(keyOfRow(row)));
              if (when === 'before-run') expect(written).toEqual([]);
            } else {
              expect(want).not.toBeNull();
              expect(sortedByKey(written)).toEqual(sortedByKey(want!));
            }
          },
        ),
        {
          seed: SEED,
          numRuns: RUNS,
          endOnFailure: true,
          // Always: a forged line in a batch not yet started when the file changes (CRC-32 alone takes it).
          examples: [[12, 'rollouts', 'after-plan', { kind: 'forged-crc', a: 10, b: 11 }, 0, 2]],
        },
      );
    },
  );

  it(
    `an -o whose base name is near 255 bytes: it runs, or one line names the path and the limit and nothing is written (seed ${SEED})`,
    { timeout: 60_000 + 8 * CASE_LIMIT_MS },
    async () => {
      const rs = server();
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 200, max: 255 }), fc.constantFrom('x', 'é'), async (size, letter) => {
          const dir = tempDir('reverify-name-');
          const specs = [
            { t: 10, r: 0 },
            { t: 10, r: 1 },
          ];
          writeFileSync(join(dir, 'inputs.jsonl'), specs.map((s) => inputLine(s)).join('\n') + '\n');
          writeFileSync(join(dir, 'rollouts.jsonl'), specs.map((s) => successLine(s)).join('\n') + '\n');
          // A base name of `size` bytes (UTF-8: 'é' is two), ending in .jsonl.
          const stem = letter.repeat(Math.floor((size - 6) / Buffer.byteLength(letter)));
          const output = join(dir, `${stem}.jsonl`);
          const before = readdirSync(dir).sort();
          arm(Infinity);
          const { error } = await runInProcess({
            inputs: join(dir, 'inputs.jsonl'),
            rollouts: join(dir, 'rollouts.jsonl'),
            output,
            servers: [`rs=${rs.url}`],
            maxAttempts: 1,
            disableAggregation: true,
          });
          // The work directory `.<name>.reverify` alone is 10 bytes longer than the name.
          if (Buffer.byteLength(stem) + 6 + 10 > 255) expect(error).not.toBeNull();
          if (error) {
            expect(error.code).toBe(1);
            expect(error.line).not.toContain('\n');
            expect(error.line).toContain(dir); // names the path
            expect(error.line).toContain('limit of 255 bytes per name');
            expect(readdirSync(dir).sort()).toEqual(before); // nothing written
          } else {
            expect(readOutput(output).map(keyOfRow).sort()).toEqual(['10:0', '10:1']);
          }
        }),
        { seed: SEED, numRuns: 8, endOnFailure: true },
      );
    },
  );
});
