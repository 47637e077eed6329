/**
 * The commands of `reverify`, declared on commander, by kind: running and working, watching and
 * reading a run, files without a server, changing a live run, the demo and servers (in `--help`'s order). Every command but `run` is
 * imported when it runs: loading (and transpiling) the modules of all commands took seconds of
 * every command's start.
 */
import { Command, Option } from 'commander';
import { INPUT_FORMATS, type InputFormat } from '../contract/atif-messages.js';
import { REVERIFY_MODES } from '../contract/reverify-mode.js';
import type { runReferenceServerCli } from '../reference-server/main.js';
import { devServerStatus, ensureDevServer, stopDevServer } from '../temporal/dev-server/index.js';
import type { controlCommand } from './control-command.js';
import { exitStatusOf } from './end-summary.js';
import { handleInterrupts } from './interrupt.js';
import { installRuntime } from './install-runtime.js';
import { runCommand } from './run-command.js';
import { collect, float, heartbeatFlag, int, optionOf, runOptions, toRaw } from './run-flag-options.js';

/** `run` (its exit status through `setCode`) and `worker`. */
export function addRunCommands(program: Command, setCode: (code: number) => void): void {
  runOptions(program.command('run').description('re-verify rollouts against resources servers')).action(
    async (o: Record<string, unknown> & { worker: boolean; workers: number; heartbeatTimeout: number; json?: boolean }) => {
      // `--rejudge-saved … --dry-run`: a check of the files; no run starts.
      if (o.dryRun === true) return (await import('./rejudge-saved-check.js')).rejudgeSavedCheck(toRaw(o), (l) => console.log(l));
      installRuntime(false);
      handleInterrupts();
      const proc = {
        worker: o.worker,
        workers: o.workers,
        heartbeatTimeoutMs: Math.round(o.heartbeatTimeout * 1000),
        json: o.json === true,
      };
      setCode(exitStatusOf(await runCommand(toRaw(o), proc)));
    },
  );

  program
    .command('worker')
    .description('run a worker for the reverify task queue (TEMPORAL_ADDRESS names the cluster)')
    .option('--max-activities <n>', 'batch activities run at once by this worker', int('--max-activities'), 64)
    .action(async (o: { maxActivities: number }) => {
      installRuntime(true);
      await (await import('./worker-command.js')).workerCommand({ maxConcurrentActivities: o.maxActivities });
    });
}

/** Commands on files that need no Temporal server: `aggregate`, `upload`. */
export function addFileCommands(program: Command): void {
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
    .option('--overwrite', 'replace an existing --output and its metrics file (never a shard)')
    .action(async (o: { inputGlob: string; output: string; config: string[]; server: string[]; merge: boolean; overwrite?: boolean }) => {
      await (
        await import('./aggregate-command.js')
      ).aggregateCommand({
        inputGlob: o.inputGlob,
        output: o.output,
        configs: o.config,
        servers: o.server,
        merge: o.merge,
        overwrite: o.overwrite ?? false,
      });
    });

  program
    .command('compare')
    .description(
      'compare outputs re-scored from the same rollouts (e.g. two judges), pairwise: paired deltas per agent with task-clustered intervals, flips, agreement (needs no Temporal server)',
    )
    .argument(
      '<outputs...>',
      'two or more main outputs (JSONL) of runs on the same --rollouts; each pair is compared as B − A in the order given',
    )
    .option('--json', 'print the comparison as one JSON object on stdout')
    .option('--confidence <p>', 'level of the intervals', float('--confidence'), 0.95)
    .action(async (outputs: string[], o: { json?: boolean; confidence: number }) => {
      await (
        await import('./compare-command.js')
      ).compareCommand(
        outputs,
        { json: o.json === true, confidence: o.confidence },
        (l) => console.log(l),
        (l) => console.error(l),
      );
    });

  program
    .command('omit')
    .description(
      'save rollouts as intentional omissions (record_omission): never retried nor scored, counted as intentionally omitted, with the reason (needs no Temporal server)',
    )
    .requiredOption('-o, --output <path>', "the run's --output")
    .requiredOption('--rollouts <path>', "the run's --rollouts: the rows the omissions are made from")
    .option('--keys <keys>', 'the rollouts to omit: TASK:ROLLOUT, comma-separated')
    .option('--tasks <tasks>', 'omit every rollout of these tasks: task indices, comma-separated')
    .option('--keys-file <path>', 'the rollouts to omit: a file of TASK:ROLLOUT lines or JSONL rows')
    .requiredOption('--reason <text>', 'why (saved in each row as _ng_failure_message; its first 2000 characters)')
    .option('--dry-run', 'check and list what would be omitted; write nothing')
    .action(async (o: import('./omit-command.js').OmitOptions) => {
      await (await import('./omit-command.js')).omitCommand(o, (l) => console.log(l));
    });

  program
    .command('upload')
    .description(
      'upload a finished run to the MLflow and W&B trackers its --config names (rollouts table, metrics), e.g. after a failed upload (needs no Temporal server)',
    )
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--config <path>', 'NeMo Gym YAML config with the mlflow_* or wandb_* keys (repeatable, merged in order)', collect, [])
    .addOption(new Option('--to <tracker>', 'upload to this tracker only (default: each the config names)').choices(['mlflow', 'wandb']))
    .action(async (o: { output: string; config: string[]; to?: 'mlflow' | 'wandb' }) => {
      await (await import('./upload-command.js')).uploadCommand({ output: o.output, configs: o.config, to: o.to }, (l) => console.log(l));
    });
}

/** Changing a live run: `control`, `cancel`. */
export function addRunControls(program: Command): void {
  program
    .command('control')
    .description('change a live run from any machine: its concurrency ceiling, request budget, pause, unpause')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--concurrency <n>', 'new ceiling of /verify requests in flight', int('--concurrency'))
    .option('--pause', 'start no new batch (those in flight finish)')
    .option('--unpause', 'continue a paused run')
    .option(
      '--max-requests <n>',
      'new budget of /verify requests of the whole run (raising a spent one continues the run)',
      int('--max-requests'),
    )
    .action(async (o: Parameters<typeof controlCommand>[0]) => {
      installRuntime(false);
      await (await import('./control-command.js')).controlCommand(o, (l) => console.log(l));
    });

  program
    .command('cancel')
    .description('end the run writing an output, whatever it waits on: committed rows stay; continue later with --resume')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--no-worker', "do not run a worker in this process: the run's own workers carry out the cancellation")
    .action(async (o: { output: string; worker: boolean }) => {
      installRuntime(false);
      await (await import('./cancel-command.js')).cancelCommand({ output: o.output, worker: o.worker }, (l) => console.log(l));
    });
}

/** `demo`, `reference-server`, and `server` for the embedded Temporal dev server. */
export function addDemoAndServers(program: Command): void {
  program
    .command('demo')
    .description('generate a sample run, start the reference server, and re-verify it')
    .option('--dir <path>', 'where to write the demo files', 'demo-output')
    .option('--tasks <n>', 'tasks', int('--tasks'), 100)
    .option('--repeats <n>', 'rollouts per task', int('--repeats'), 4)
    .addOption(optionOf(heartbeatFlag))
    .addOption(
      new Option('--input-format <format>', 're-verify the rollouts (gym) or the same rollouts written as ATIF v1.7 trajectories (atif)')
        .choices(INPUT_FORMATS)
        .default('gym'),
    )
    .action(async (o: { dir: string; tasks: number; repeats: number; heartbeatTimeout: number; inputFormat: InputFormat }) => {
      installRuntime(false);
      handleInterrupts();
      await (await import('./demo-command.js')).demoCommand(o, { worker: true, heartbeatTimeoutMs: Math.round(o.heartbeatTimeout * 1000) });
    });

  program
    .command('reference-server')
    .description('a small, fast NeMo Gym-compatible resources server (mcqa grading)')
    .option('--port <n>', 'port (0: any free port)', int('--port'), 8000)
    .option('--host <host>', 'bind address', '127.0.0.1')
    .addOption(new Option('--mode <mode>', 'what GET /reverify_mode answers').choices(REVERIFY_MODES).default('stateless'))
    .option('--latency-ms <n>', 'delay before each /verify answer', float('--latency-ms'), 0)
    .option(
      '--latency-spread <sigma>',
      'log-normal spread of that delay around it, as judges answer (1: the slowest in 100 wait 10 x)',
      float('--latency-spread'),
      0,
    )
    .option('--judge-fail-rate <p>', 'share of /verify answered as judge failures', float('--judge-fail-rate'), 0)
    .option('--error-rate <p>', 'share of /verify answered with HTTP 500', float('--error-rate'), 0)
    .option('--reset-rate <p>', 'share of /verify whose connection is reset', float('--reset-rate'), 0)
    .option('--hang-rate <p>', 'share of /verify never answered', float('--hang-rate'), 0)
    .option('--invalid-judge <keys>', 'rows (TASK:ROLLOUT[@N],...) whose verdict is flagged invalid_judge_response (first N gradings)')
    .option('--permanent-invalid-judge <keys>', 'like --invalid-judge, with invalid_judge_retryable: false')
    .option('--pretty', 'answer /verify with indented JSON, as servers that pretty-print do')
    .option('--rpm <n>', 'requests per minute /verify takes; beyond it 429 with Retry-After (0: no limit)', float('--rpm'), 0)
    .option('--rpm-burst <n>', 'requests of the --rpm quota that can be saved up (0: one second of it)', int('--rpm-burst'), 0)
    .option('--seed <n>', 'seed of the simulated failures', int('--seed'), 1)
    .action(async (o: Parameters<typeof runReferenceServerCli>[0]) =>
      (await import('../reference-server/main.js')).runReferenceServerCli(o),
    );

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
}
