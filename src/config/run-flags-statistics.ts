/** The flags of the live estimate and what acts on it (docs/statistics.md), in `RUN_FLAG_LIST`'s order. */
import { DEFAULT_CONFIDENCE } from './run-defaults.js';
import type { RunFlag } from './run-flag.js';

export const STATISTICS_FLAGS: readonly RunFlag[] = [
  {
    usage: '--confidence P',
    key: 'confidence',
    kind: 'number',
    meaning:
      "level of the live estimate's intervals (old and new mean, delta new − old, flips, per agent: progress line, `reverify status`; see docs/statistics.md), between 0 and 1",
    shownDefault: String(DEFAULT_CONFIDENCE),
  },
  {
    usage: '--fail-if RULE',
    key: 'failIf',
    kind: 'list',
    meaning:
      "a gate for CI (repeatable): at the end, exit with status 5 and a line naming the rule, the estimate and its interval when the rule holds on the run's final estimate, e.g. `--fail-if 'all.delta(mean/reward) < -0.02'` (see \"Gates for CI\" in docs/usage.md)",
    shownDefault: '',
  },
  {
    usage: '--stop-when RULE',
    key: 'stopWhen',
    kind: 'list',
    meaning:
      'end the first pass early when RULE holds (repeatable; the first to hold wins): `delta-excludes-zero` or `width<X` (the live interval of new − old over all agents; needs `--order random`), `rows>=N`, `requests>=N`; batches in flight finish, rows never started are listed in `<stem>_unstarted.jsonl`, `--resume` runs them (see "Stopping early" in docs/usage.md)',
    shownDefault: 'none',
  },
  {
    usage: '--noise-sample N',
    key: 'noiseSample',
    kind: 'int',
    meaning:
      "once the run's rounds are done, judge N rows this run scored a second time (drawn by `--seed`), into `<stem>_noise.jsonl`; the output never changes, the requests count in `--max-requests`; the end summary, `reverify status` and the report give the judge's self-agreement (flip rate, Cohen's κ, mean abs. reward change; docs/statistics.md)",
    shownDefault: '0 (none)',
  },
];
