/** What shows a run: `status`, `list`, `history`, `report`, `read` (each imported when it runs). */
import type { Command } from 'commander';
import { installRuntime } from './install-runtime.js';
import { collect, int } from './run-flag-options.js';
import type { PolicyFlags } from './saved-policy.js';

function addStatus(program: Command): void {
  program
    .command('status')
    .description('show the state of the run writing an output')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--json', 'print the state as one JSON object')
    .option(
      '--extend-attempts <n>',
      'preview, writing nothing, which rollouts `run --resume --extend-attempts N` would reopen',
      int('--extend-attempts'),
    )
    .option('--retry-terminal-timeouts', 'preview, writing nothing, what `run --resume --retry-terminal-timeouts` would reopen')
    .option('--no-retry-terminal-timeouts', 'preview what `run --resume --no-retry-terminal-timeouts` would leave terminal')
    .option('--dispatch-longest-first', 'preview `run --resume --dispatch-longest-first`')
    .option('--no-dispatch-longest-first', 'preview `run --resume --no-dispatch-longest-first`')
    .action(async (o: { output: string; json?: boolean; extendAttempts?: number } & PolicyFlags) => {
      installRuntime(false);
      const { extendAttempts, retryTerminalTimeouts, dispatchLongestFirst } = o;
      await (
        await import('./status-command.js')
      ).statusCommand(o.output, (l) => console.log(l), {
        json: o.json === true,
        extendAttempts,
        retryTerminalTimeouts,
        dispatchLongestFirst,
      });
    });
}

function addList(program: Command): void {
  program
    .command('list')
    .description('show the runs on the Temporal server: output path, state, progress, start, duration')
    .option('--json', 'print the runs as one JSON array')
    .action(async (o: { json?: boolean }) => {
      installRuntime(false);
      await (await import('./list-command.js')).listCommand((l) => console.log(l), { json: o.json === true });
    });
}

function addHistory(program: Command): void {
  program
    .command('history')
    .description("the run's audit trail from its Temporal history: its timeline, or every attempt of one rollout")
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--key <T:R>', 'one rollout: _ng_task_index:_ng_rollout_index, e.g. 12:3')
    .option('--json', 'print JSON')
    .action(async (o: { output: string; key?: string; json?: boolean }) => {
      installRuntime(false);
      await (await import('./history-command.js')).historyCommand(o, (l) => console.log(l));
    });
}

function addReport(program: Command): void {
  program
    .command('report')
    .description('what changed against the original run: flips, metric deltas, agreement, failures, throughput (HTML, or JSON)')
    .requiredOption('-o, --output <path>', "the run's --output")
    .option('--html <path>', 'where to write the HTML report (default <stem>_report.html next to the output)')
    .option('--json', 'also print the numbers as one JSON object on stdout')
    .option('--rollouts <path>', "the old verdicts, when the Temporal server no longer has the run (default: the run's --rollouts)")
    .option(
      '--fail-if <rule>',
      "a gate for CI (repeatable): exit 5 with the rule's line when it holds, e.g. 'all.delta(mean/reward) < -0.02' (docs/usage.md, \"Gates for CI\")",
      collect,
      [],
    )
    .action(async (o: { output: string; html?: string; json?: boolean; rollouts?: string; failIf: string[] }) => {
      installRuntime(false);
      await (
        await import('./report-command.js')
      ).reportCommand(
        o,
        (l) => console.log(l),
        (l) => console.error(l),
      );
    });
}

function addRead(program: Command): void {
  program
    .command('read')
    .description(
      "a run's selected outcomes as JSONL (rows verbatim; no lock, nothing written), then on stderr whether a plain reader may read its files unfiltered (needs no Temporal server)",
    )
    .requiredOption('-o, --output <path>', "the run's --output")
    .option(
      '--disposition <d>',
      'only these: success, failure, omitted (_ng_omitted or a terminal skip), unknown (a managed run: attempt allocated, no outcome saved)',
    )
    .option('--json', 'the stderr summary as one JSON object')
    .option(
      '--records',
      'metadata only (selected_records): one JSON line per selected outcome with its rollout id, attempt, file, line and byte slice',
    )
    .option(
      '--skip-keys <keys>',
      'comma-separated top-level keys left out of each row (e.g. response, for a selection that reads no trajectory)',
    )
    .option(
      '--retry-terminal-timeouts',
      'count terminal timeouts as retryable in the summary (runs without a manifest; a managed run keeps its saved policy)',
    )
    .option('--no-import-legacy', 'read a NeMo Gym run without a manifest as a plain run, not by importing its materialized inputs')
    .option(
      '--artifacts <files>',
      'comma-separated files the caller reads: raw_outcomes_are_selected compares only these (default: results and failures)',
    )
    .action(async (o: import('./read-command.js').ReadOptions) => {
      await (await import('./read-command.js')).readCommand(o);
    });
}

export function addRunViews(program: Command): void {
  addStatus(program);
  addList(program);
  addHistory(program);
  addReport(program);
  addRead(program);
}
