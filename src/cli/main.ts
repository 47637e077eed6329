import { Command, InvalidArgumentError, Option } from 'commander';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { runReferenceServerCli } from '../reference-server/main.js';
import { devServerStatus, ensureDevServer, stopDevServer } from '../temporal/dev-server/index.js';
import { aggregateCommand } from './aggregate-command.js';
import { cancelCommand } from './cancel-command.js';
import { controlCommand } from './control-command.js';
import { demoCommand } from './demo-command.js';
import { DEFAULT_BATCH_SIZE } from '../config/run-options.js';
import { describeFailure, EXIT_OK } from './exit-codes.js';
import { runCommand } from './run-command.js';
import { statusCommand } from './status-command.js';
import { workerCommand } from './worker-command.js';

const collect = (v: string, prev: string[]) => [...prev, v];
const int = (flag: string) => (v: string) => {
  if (!/^-?\d+$/.test(v.trim())) throw new InvalidArgumentError(`${flag} takes a whole number, got '${v}'`);
  return Number(v);
};
const float = (flag: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`${flag} takes a number, got '${v}'`);
  return n;
};

/** Heartbeat timeout of batch activities: how soon a killed worker's batch moves to another. */
const heartbeatOption = new Option('--heartbeat-timeout <seconds>', "how soon a dead worker's batch is retried elsewhere")
  .argParser(float('--heartbeat-timeout'))
  .default(30);

function runOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--inputs <path>', 'materialized inputs JSONL of the original run (<run>_materialized_inputs.jsonl)')
    .requiredOption('--rollouts <path>', 'rollouts JSONL to re-verify (the main output of the original run)')
    .requiredOption('-o, --output <path>', 'output JSONL; <stem>_failures.jsonl and <stem>_aggregate_metrics.json go next to it')
    .option('--config <path>', 'NeMo Gym YAML config (repeatable): agent -> resources server routing, host/port', collect, [])
    .option('--server <name=url>', 'resources server URL by instance name (repeatable); overrides the config', collect, [])
    .option('--concurrency <n>', 'most /verify requests in flight across all workers (default 32)', int('--concurrency'))
    .option('--limit <n>', 'verify only the first N rollouts', int('--limit'))
    .option('--force', 'run even if a server is not reverify-safe; output gets the unsafe_ prefix')
    .option('--overwrite', 'delete an existing output and sidecar first')
    .option('--disable-aggregation', 'skip /aggregate_metrics (for shards; run `reverify aggregate` later)')
    .option('--resume', 'continue from the existing output and sidecar: skip done, terminal and maxed-out keys')
    .option('--judge-failed-only', 'recovery: copy the successes of --rollouts, re-verify the judge failures of its sidecar')
    .option('--append', "with --judge-failed-only: write into an existing output (e.g. the run's own rollouts.jsonl)")
    .option(
      '--max-attempts <n>',
      'attempt cap per key (default NEMO_GYM_MAX_ROLLOUT_ATTEMPTS or 3; 1 = a single pass)',
      int('--max-attempts'),
    )
    .option('--no-rejudge', 'one pass only, as NeMo Gym: judge failures stay in the sidecar for a later --resume')
    .option(
      '--rejudge-delay <seconds>',
      'wait before the first re-judgment round; doubles every round (default 60)',
      float('--rejudge-delay'),
    )
    .option('--repair-truncated', 'with --resume/--append: cut a cut-off last line of the output instead of stopping')
    .option('--batch-size <n>', `rows per batch activity (default ${DEFAULT_BATCH_SIZE})`, int('--batch-size'))
    .option('--request-timeout <seconds>', 'timeout of one /verify request (default 600: LLM judges are slow)', float('--request-timeout'))
    .option('--no-worker', 'do not run a worker in this process; `reverify worker` processes do the work')
    .addOption(heartbeatOption);
}

function toRaw(o: Record<string, unknown>) {
  return {
    inputs: o.inputs,
    rollouts: o.rollouts,
    output: o.output,
    configs: o.config,
    servers: o.server,
    concurrency: o.concurrency,
    limit: o.limit,
    force: o.force ?? false,
    overwrite: o.overwrite ?? false,
    disableAggregation: o.disableAggregation ?? false,
    resume: o.resume ?? false,
    judgeFailedOnly: o.judgeFailedOnly ?? false,
    append: o.append ?? false,
    repairTruncated: o.repairTruncated ?? false,
    maxAttempts: o.maxAttempts,
    rejudge: o.rejudge,
    rejudgeDelayMs: o.rejudgeDelay === undefined ? undefined : Math.round((o.rejudgeDelay as number) * 1000),
    batchSize: o.batchSize,
    requestTimeoutMs: o.requestTimeout === undefined ? undefined : Math.round((o.requestTimeout as number) * 1000),
  };
}

/**
 * Installs Temporal's runtime once, before any connection. A worker process shuts down cleanly on
 * SIGINT/SIGTERM; a `run` detaches instead (the run is durable and goes on when a worker is back).
 */
function installRuntime(workerOwnsSignals: boolean): void {
  // A `run` reports failures itself in one line; its in-process worker only logs errors.
  // `REVERIFY_LOG_LEVEL` (TRACE, DEBUG, INFO, WARN, ERROR) overrides.
  const level = (process.env.REVERIFY_LOG_LEVEL as 'WARN' | undefined) ?? (workerOwnsSignals ? 'WARN' : 'ERROR');
  Runtime.install({
    logger: new DefaultLogger(level),
    // The SDK core logs on its own (WARN by default): at the same level, so a lost Temporal server is
    // one line of ours (exit-codes.ts), not pages of gRPC retries.
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level, other: level }) } },
    shutdownSignals: workerOwnsSignals ? ['SIGINT', 'SIGTERM'] : [],
  });
}

function detachOnInterrupt(): void {
  const detach = () => {
    process.stderr.write(
      '\nDetached. The run is durable: run the same command again to continue it, or start `reverify worker` processes.\n',
    );
    process.exit(130);
  };
  process.once('SIGINT', detach);
  process.once('SIGTERM', detach);
}

async function main(argv: string[]): Promise<number> {
  const program = new Command('reverify')
    .description('Re-verify stored NeMo Gym rollouts as a durable Temporal workflow')
    .showHelpAfterError()
    .exitOverride();
  let code = EXIT_OK;

  runOptions(program.command('run').description('re-verify rollouts against resources servers')).action(
    async (o: Record<string, unknown> & { worker: boolean; heartbeatTimeout: number }) => {
      installRuntime(false);
      detachOnInterrupt();
      await runCommand(toRaw(o), { worker: o.worker, heartbeatTimeoutMs: Math.round(o.heartbeatTimeout * 1000) });
    },
  );

  program
    .command('worker')
    .description('run a worker for the reverify task queue (TEMPORAL_ADDRESS names the cluster)')
    .option('--max-activities <n>', 'batch activities run at once by this worker', int('--max-activities'), 64)
    .action(async (o: { maxActivities: number }) => {
      installRuntime(true);
      await workerCommand({ maxConcurrentActivities: o.maxActivities });
    });

  program
    .command('status')
    .description('show the state of the run writing an output')
    .requiredOption('-o, --output <path>', "the run's --output")
    .action(async (o: { output: string }) => {
      installRuntime(false);
      await statusCommand(o.output, (l) => console.log(l));
    });

  program
    .command('aggregate')
    .description('merge the shards of runs made with --disable-aggregation and compute their aggregate metrics (needs no Temporal server)')
    .requiredOption(
      '-i, --input-glob <globs>',
      "shard JSONL glob(s), comma-separated, e.g. 'shards/*.jsonl'; *_failures.jsonl files are excluded",
    )
    .requiredOption('-o, --output <path>', 'merged JSONL, sorted by key; <stem>_aggregate_metrics.json goes next to it')
    .option('--config <path>', 'NeMo Gym YAML config (repeatable): agent -> resources server routing, host/port', collect, [])
    .option('--server <name=url>', 'resources server URL by instance name (repeatable); overrides the config', collect, [])
    .option('--no-merge', 'only compute the metrics; do not write --output')
    .action(async (o: { inputGlob: string; output: string; config: string[]; server: string[]; merge: boolean }) => {
      await aggregateCommand({ inputGlob: o.inputGlob, output: o.output, configs: o.config, servers: o.server, merge: o.merge });
    });

  program
    .command('control')
    .description('change a live run from any machine: its concurrency ceiling, pause, unpause')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--concurrency <n>', 'new ceiling of /verify requests in flight', int('--concurrency'))
    .option('--pause', 'start no new batch (those in flight finish)')
    .option('--unpause', 'continue a paused run')
    .action(async (o: Parameters<typeof controlCommand>[0]) => {
      installRuntime(false);
      await controlCommand(o, (l) => console.log(l));
    });

  program
    .command('cancel')
    .description('end the run writing an output, whatever it waits on: committed rows stay; continue later with --resume')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--no-worker', "do not run a worker in this process: the run's own workers carry out the cancellation")
    .action(async (o: { output: string; worker: boolean }) => {
      installRuntime(false);
      await cancelCommand({ output: o.output, worker: o.worker }, (l) => console.log(l));
    });

  program
    .command('demo')
    .description('generate a sample run, start the reference server, and re-verify it')
    .option('--dir <path>', 'where to write the demo files', 'demo-output')
    .option('--tasks <n>', 'tasks', int('--tasks'), 100)
    .option('--repeats <n>', 'rollouts per task', int('--repeats'), 4)
    .addOption(heartbeatOption)
    .action(async (o: { dir: string; tasks: number; repeats: number; heartbeatTimeout: number }) => {
      installRuntime(false);
      detachOnInterrupt();
      await demoCommand(o, { worker: true, heartbeatTimeoutMs: Math.round(o.heartbeatTimeout * 1000) });
    });

  program
    .command('reference-server')
    .description('a small, fast NeMo Gym-compatible resources server (mcqa grading)')
    .option('--port <n>', 'port (0: any free port)', int('--port'), 8000)
    .option('--host <host>', 'bind address', '127.0.0.1')
    .addOption(
      new Option('--mode <mode>', 'what GET /reverify_mode answers').choices(['stateless', 'unknown', 'unsupported']).default('stateless'),
    )
    .option('--latency-ms <n>', 'delay before each /verify answer', float('--latency-ms'), 0)
    .option('--judge-fail-rate <p>', 'share of /verify answered as judge failures', float('--judge-fail-rate'), 0)
    .option('--error-rate <p>', 'share of /verify answered with HTTP 500', float('--error-rate'), 0)
    .option('--reset-rate <p>', 'share of /verify whose connection is reset', float('--reset-rate'), 0)
    .option('--hang-rate <p>', 'share of /verify never answered', float('--hang-rate'), 0)
    .option('--seed <n>', 'seed of the simulated failures', int('--seed'), 1)
    .action(async (o: Parameters<typeof runReferenceServerCli>[0]) => runReferenceServerCli(o));

  const server = program.command('server').description('the embedded Temporal dev server (used when TEMPORAL_ADDRESS is unset)');
  server.command('start').action(async () => {
    const s = await ensureDevServer();
    console.log(`Temporal dev server ${s.started ? 'started' : 'already running'} at ${s.address}; UI ${s.uiUrl} (pid ${s.pid})`);
  });
  server.command('stop').action(async () => {
    const { stopped, pid } = await stopDevServer();
    console.log(stopped ? `Temporal dev server stopped (pid ${pid})` : 'No Temporal dev server was running');
  });
  server.command('status').action(async () => {
    console.log(JSON.stringify(await devServerStatus(), null, 2));
  });

  try {
    await program.parseAsync(argv);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    const { line, code: c } = describeFailure(err);
    console.error(line);
    code = c;
  }
  return code;
}

// Exit explicitly: Temporal's native runtime keeps handles open after the work is done.
process.exit(await main(process.argv));
