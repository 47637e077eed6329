/**
 * Credentials of a resources server (`http://user:password@host:port` in `--server` or a config's
 * host, or `REVERIFY_SERVER_AUTH` for workers): every request to that server carries HTTP Basic
 * `Authorization`, and the password is never printed nor in the workflow history.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { runCommand } from '../../src/cli/run-command.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { captureIo, runReverify } from '../helpers/run-fixtures.js';
import { startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import { tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('server-credentials');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

const USER = 'judge@team';
const PASSWORD = 'p:ss wörd%42';
/** The userinfo as a URL carries it (RFC 3986 percent-encoding). */
const USERINFO = `${encodeURIComponent(USER)}:${encodeURIComponent(PASSWORD)}`;
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`, 'utf8').toString('base64')}`;
const SECRETS = [PASSWORD, encodeURIComponent(PASSWORD), Buffer.from(`${USER}:${PASSWORD}`).toString('base64')];

const withUserinfo = (rs: ScriptedServer, userinfo = USERINFO) => rs.url.replace('http://', `http://${userinfo}@`);

/** The history's events with every payload decoded to text. */
async function historyText(output: string): Promise<string> {
  const history = await client().workflow.getHandle(workflowIdForOutput(output)).fetchHistory();
  const json = JSON.stringify(history);
  return (
    json + json.replace(/"data":"([A-Za-z0-9+/=]*)"/g, (_m, b64: string) => JSON.stringify(Buffer.from(b64, 'base64').toString('utf8')))
  );
}

/** Every request carried the header, and the three routes were all called. */
function expectAuthorizedEverywhere(rs: ScriptedServer, expected = BASIC): void {
  expect(rs.requests.map((r) => `${r.method} ${r.url}`)).toEqual(
    expect.arrayContaining(['GET /reverify_mode', 'POST /verify', 'POST /aggregate_metrics']),
  );
  for (const r of rs.requests) expect(r.headers.authorization).toBe(expected);
}

describe('credentials of a resources server', () => {
  afterEach(() => {
    delete process.env.REVERIFY_SERVER_AUTH;
  });

  it('--server NAME=http://user:password@host:port: every request carries Basic auth (percent-decoded); the password is neither printed nor in the history', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    const { error, lines } = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      servers: [`rs=${withUserinfo(rs)}`],
    });
    expect(error).toBeNull();
    expectAuthorizedEverywhere(rs);
    const history = await historyText(f.output);
    expect(history).toContain(rs.url);
    for (const secret of SECRETS) {
      expect(lines.join('\n')).not.toContain(secret);
      expect(history).not.toContain(secret);
    }
  });

  it('a config whose host carries user:password@: Basic auth on every request', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const config = join(f.dir, 'rs.yaml');
    writeFileSync(
      config,
      `rs:\n  resources_servers:\n    mcqa:\n      entrypoint: app.py\n      host: "${USERINFO}@127.0.0.1"\n      port: ${rs.port}\n`,
    );
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toBeNull();
    expectAuthorizedEverywhere(rs);
  });

  it("REVERIFY_SERVER_AUTH in the worker's environment gives the credentials of a plain --server URL", async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    process.env.REVERIFY_SERVER_AUTH = `http://other:x@127.0.0.1:1 ${withUserinfo(rs, 'worker:s%20cret')}`;
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs')] });
    expect(error).toBeNull();
    expectAuthorizedEverywhere(rs, `Basic ${Buffer.from('worker:s cret').toString('base64')}`);
  });

  it('with --no-worker, credentials in a URL are refused in one line that names the environment variable; nothing is sent', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    const io = captureIo();
    const err = await runCommand(
      { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [`rs=${withUserinfo(rs)}`] },
      { worker: false, heartbeatTimeoutMs: 10_000 },
      io,
    ).catch((e: unknown) => e);
    const { line, code } = describeFailure(err);
    expect(code).toBe(1);
    expect(line).toContain("resources server 'rs'");
    expect(line).toContain('REVERIFY_SERVER_AUTH');
    expect(line.split('\n')).toHaveLength(1);
    for (const secret of SECRETS) expect(line + io.lines.join('\n')).not.toContain(secret);
    expect(rs.requests).toHaveLength(0);
  });
});
