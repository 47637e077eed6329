import type { Reporter, RunnerTask, RunnerTestFile } from 'vitest';

/** Prints the plain closing line `N passed, N failed` (CI reads it) after vitest's own summary. */
export default class SummaryReporter implements Reporter {
  onFinished(files: RunnerTestFile[] = [], errors: unknown[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const walk = (t: RunnerTask) => {
      if (t.type === 'test') {
        const state = t.result?.state;
        if (state === 'pass') passed++;
        else if (state === 'fail') failed++;
        else skipped++;
      } else if ('tasks' in t) t.tasks.forEach(walk);
    };
    files.forEach((f) => {
      walk(f);
      if (f.result?.state === 'fail' && f.tasks.length === 0) failed++;
    });
    failed += errors.length;
    console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
}
