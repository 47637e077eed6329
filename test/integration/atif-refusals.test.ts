/**
 * What ATIF runs refuse, through the real workflow (and the CLI for flags): the preflight (stateless
 * verifiers, MCP exposure of tool calls) before any output path is prepared, malformed trajectories
 * and manifests, broken joins. Each is one line, exit status 1, and leaves nothing behind.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MAX_TRAJECTORY_BYTES } from '../../src/atif/trajectory-file.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { atifOptions, atifRun, editManifest, filesIn, useFixture, type AtifRun } from '../helpers/atif-fixtures.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runInProcess as run } from '../helpers/run-fixtures.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { runGone, tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('atif-refusals');
const client = useTemporalClient(temporal);
const scripted = closedAfterEach(startScriptedServer);

/** The activity types a run scheduled, in order. */
async function activities(output: string): Promise<string[]> {
  const history = await client().workflow.getHandle(workflowIdForOutput(output)).fetchHistory();
  return (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n);
}

/** Runs an ATIF run that must be refused: its one line and exit 1, with the run's directory as it was. */
async function refused(d: AtifRun, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = join(d.output, '..');
  const before = filesIn(dir);
  const { error } = await run(atifOptions(d, extra));
  expect(error).not.toBeNull();
  expect(error!.code).toBe(1);
  expect(error!.line.split('\n')).toHaveLength(1);
  expect(filesIn(dir)).toEqual(before);
  return error!.line.replace(/^Error: /, '');
}

/** The sample config with `expose_tools_over_mcp` set on the resources server. */
function exposeOverMcp(d: AtifRun, value: unknown): void {
  const config = parse(readFileSync(d.config, 'utf8')) as Record<string, { resources_servers?: { mcqa: Record<string, unknown> } }>;
  config.mcqa_rs.resources_servers!.mcqa.expose_tools_over_mcp = value;
  writeFileSync(d.config, stringify(config));
}

describe('the ATIF preflight, before any output path is prepared', () => {
  it('refuses servers that are not stateless (no --force in ATIF mode); the refused run is removed from the server', async () => {
    const rs = await scripted({ mode: 'unknown' });
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const output = join(d.output, '..', 'new', 'dir', 'out.jsonl');
    const { error } = await run(atifOptions(d, { output }));
    expect(error!.line).toBe(
      "Error: ATIF reverification requires stateless verifiers; resource server(s) ['mcqa_rs'] reported reverify_mode=UNSUPPORTED or UNKNOWN.",
    );
    expect(existsSync(join(d.output, '..', 'new'))).toBe(false);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(await runGone(client(), output)).toBe(true);
  });

  it('comes after the plan and before the outputs: an accepted run schedules plan, preflight, prepare, open, coverage, verify', async () => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    expect((await run(atifOptions(d))).error).toBeNull();
    expect((await activities(d.output)).slice(0, 6)).toEqual([
      'planAtif',
      'atifPreflight',
      'checkOutputs',
      'openOutputs',
      'writeCoverage',
      'verifyBatch',
    ]);
  });

  it('an existing output is reported after the preflight, and is neither deleted nor changed', async () => {
    const rs = await scripted({ mode: 'unsupported' });
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(d.output, 'old\n');
    expect(await refused(d)).toContain('ATIF reverification requires stateless verifiers');
    expect(await refused(d, { overwrite: true })).toContain('ATIF reverification requires stateless verifiers');
    expect(readFileSync(d.output, 'utf8')).toBe('old\n'); // --overwrite deletes only once the run is accepted
    await rs.close();
    const ok = await scripted();
    writeFileSync(d.config, readFileSync(d.config, 'utf8').replaceAll(String(rs.port), String(ok.port)));
    expect(await refused(d)).toBe(
      `Output file already exists: '${d.output}'. Pass --overwrite to delete it and start fresh, or --resume to continue from it.`,
    );
    expect(readFileSync(d.output, 'utf8')).toBe('old\n');
  });

  it('refuses rows with function calls routed to a server exposing its tools over MCP; text-only rows pass', async () => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 3, repeats: 1 });
    exposeOverMcp(d, true);
    const textOnly = await run(atifOptions(d, { output: join(d.output, '..', 'text.jsonl') }));
    expect(textOnly.error).toBeNull();
    useFixture(d, [1, 0], 'tool-calls.json');
    expect(await refused(d)).toBe(
      "Relay ATIF tool calls cannot be reverified against MCP-exposed resources server 'mcqa_rs': ATIF proves call/result correlation " +
        "but does not carry Gym's canonical (server_name, tool_name) provenance. Use a non-MCP stateless verifier or a text-only trajectory.",
    );
    exposeOverMcp(d, 'sometimes');
    expect(await refused(d)).toBe("reverify: resources server 'mcqa_rs' has an invalid expose_tools_over_mcp value.");
    expect(await refused(d, { configs: [], servers: [rs.flag('mcqa_rs')] })).toBe(
      "reverify: resources server 'mcqa_rs' is missing from the config.",
    );
    exposeOverMcp(d, false);
    expect((await run(atifOptions(d))).error).toBeNull();
  });
});

describe('malformed ATIF input', () => {
  const place = (d: AtifRun, line: number) => `${d.manifestPath}:${line}: `;

  it.each([
    ['malformed/bad-json.json', 'invalid ATIF trajectory <file>: Expecting value: line 2 column 1 (char 83)'],
    ['malformed/wrong-version.json', "invalid ATIF trajectory <file>: schema_version: Input should be 'ATIF-v1.7'"],
    ['malformed/missing-steps.json', 'invalid ATIF trajectory <file>: steps: Field required'],
    ['malformed/duplicate-key.json', "invalid ATIF trajectory <file>: duplicate object key 'message'"],
    ['malformed/multimodal.json', '<file>: multimodal ATIF content cannot be projected losslessly for reverification'],
    ['malformed/unresolved-call.json', "<file>: step 1 has no observation result for tool call(s) 'c1'"],
  ])('%s is refused with the manifest line and the file', async (fixture, message) => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const line = useFixture(d, [1, 0], fixture);
    const file = join(d.atifDir, `fixture-${fixture.replace(/\//g, '_')}`);
    expect(await refused(d)).toBe(place(d, line) + message.replace('<file>', file));
  });

  it('refuses a pinned hash that does not match, a declared key that is not the entry key, and a repeated trajectory', async () => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 3, repeats: 1 });
    const [first] = editManifestReturning(d, (e, i) => (i === 0 ? { ...e, expected_sha256: 'f'.repeat(64) } : e));
    expect(await refused(d)).toMatch(
      new RegExp(`^${d.manifestPath}:1: ATIF source hash mismatch for ${join(d.atifDir, first)}: expected f{64}, got [0-9a-f]{64}$`),
    );
    editManifest(d, (e, i) => (i === 0 ? { ...e, expected_sha256: null } : e));
    const paths = readEntries(d).map((e) => e.trajectory_path);
    const line = useFixture(d, [2, 0], 'tool-calls.json'); // it declares task 1, rollout 0
    const file = join(d.atifDir, 'fixture-tool-calls.json');
    expect(await refused(d)).toBe(`${place(d, line)}${file}: Gym ATIF source task_index 1 conflicts with manifest value 2`);
    // Two entries naming one file (a document that declares no Gym key, so both keys accept it).
    editManifest(d, (e, i) => ({ ...e, trajectory_path: i < 2 ? paths[i] : 'fixture-text-only.json', expected_sha256: null }));
    useFixture(d, [readEntries(d)[1]._ng_task_index, 0], 'text-only.json');
    expect(await refused(d)).toBe(
      `${place(d, 3)}manifest uses ATIF source path ${join(d.atifDir, 'fixture-text-only.json')} more than once`,
    );
  });

  it('refuses a trajectory path that is a device, a FIFO or over the size limit, before reading it: one line with manifest:line and the path', async () => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const fifo = join(d.atifDir, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    const big = join(d.atifDir, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, MAX_TRAJECTORY_BYTES + 1); // sparse: no disk used
    for (const [path, what] of [
      ['/dev/zero', 'is a device, not a regular file'],
      [fifo, 'is a FIFO \\(named pipe\\), not a regular file'],
      [d.atifDir, 'is a directory, not a regular file'],
      [big, `is ${MAX_TRAJECTORY_BYTES + 1} bytes, over the ${MAX_TRAJECTORY_BYTES}-byte limit of a trajectory \\(256 MiB\\)`],
    ]) {
      editManifest(d, (e, i) => (i === 1 ? { ...e, trajectory_path: path, expected_sha256: null } : e));
      expect(await refused(d)).toMatch(new RegExp(`^${place(d, 2)}the ATIF trajectory ${path} ${what}`));
    }
    expect(rs.verifyBodies).toHaveLength(0);
  });

  it('refuses an entry without a materialized input, a repeated input key, and an empty manifest', async () => {
    const rs = await scripted();
    const d = await atifRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const line = useFixture(d, [1, 0], 'text-only.json'); // declares no Gym key
    editManifest(d, (e, i) => (i === line - 1 ? { ...e, _ng_task_index: 9 } : e));
    const file = join(d.atifDir, 'fixture-text-only.json');
    expect(await refused(d)).toBe(`${place(d, line)}manifest entry ${file} has no matching materialized input (9, 0)`);
    writeFileSync(d.inputsPath, readFileSync(d.inputsPath, 'utf8') + readFileSync(d.inputsPath, 'utf8').split('\n')[0] + '\n');
    expect(await refused(d)).toBe(`${d.inputsPath}:3: duplicate materialized input key (0, 0)`);
    writeFileSync(d.manifestPath, '\n');
    expect(await refused(d)).toBe(`ATIF manifest ${d.manifestPath} contains no entries`);
  });
});

describe('the CLI', () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [reverifyBin, ...args], { env: { ...process.env, ...temporal.env } });
      let [stdout, stderr] = ['', ''];
      child.stdout.on('data', (b) => (stdout += b));
      child.stderr.on('data', (b) => (stderr += b));
      child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });

  it('refuses flags ATIF mode does not support: one line, exit 1; --help lists the new flags', async () => {
    const r = await cli([
      'run',
      '--input-format',
      'atif',
      '--atif-manifest',
      'm.jsonl',
      '--inputs',
      'i.jsonl',
      '-o',
      'o.jsonl',
      '--server',
      'rs=http://127.0.0.1:9',
      '--force',
    ]);
    expect([r.code, r.stderr.trim()]).toEqual([1, 'Error: ATIF reverification requires a stateless verifier; --force is not supported.']);
    const help = await cli(['run', '--help']);
    expect(help.stdout).toContain('--input-format <format>');
    expect(help.stdout).toContain('--atif-manifest <path>');
  });
});

function readEntries(d: AtifRun) {
  return readFileSync(d.manifestPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { trajectory_path: string; _ng_task_index: number });
}

/** `editManifest`, returning the trajectory paths after the edit. */
function editManifestReturning(d: AtifRun, edit: Parameters<typeof editManifest>[1]): string[] {
  editManifest(d, edit);
  return readEntries(d).map((e) => e.trajectory_path);
}
