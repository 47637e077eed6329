/**
 * The run's page in the Temporal UI (issue 29 item 9), in headless Chromium against the shared dev
 * server's own Web UI (its `--ui-port`). While a multi-batch run verifies, the link `reverify status`
 * gives for its live counts opens the run's User Metadata tab (the UI 2.54 of the pinned temporal
 * CLI shows no summary or details on the tab it opens first), whose Current Details, on the first
 * screen, are the run's live counts (the same view as `reverify status`, between the progress read
 * just before and just after the page). After a Ctrl-C of `reverify run` (a graceful stop) the page
 * shows the run RUNNING (waiting for a worker) and no failed or timed-out activity anywhere in its
 * event history. Screenshots in test-output/.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { statusCommand } from '../../src/cli/status-command.js';
import type { Progress } from '../../src/contract/run-spec.js';
import { runView } from '../../src/contract/run-view.js';
import { workflowUiUrl } from '../../src/temporal/dev-server/index.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { progressQuery } from '../../workflows/definitions.js';
import { runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { projectRoot, reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('temporal-ui');
const client = useTemporalClient(temporal);
const rs = useReferenceServer({ port: 0, latencyMs: 100, judgeFailRate: 0.1, seed: 3 });
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
];
const CONCURRENCY = 2;
const shots = join(projectRoot, 'test-output');

/**
 * The Markdown of the UI's Current Details panel (rendered in a frame whose address carries it), once
 * shown. The UI asks the run's worker for them once per load; on a loaded machine that answer can
 * come too late for the page (two CI runs timed out here after 30 s, with the run live), so the page
 * is loaded again, up to three times, a screenshot kept of each miss.
 */
async function currentDetails(page: Page): Promise<string> {
  const frame = page.locator('iframe[src*="render?content=**Rows"]').first();
  for (let load = 1; ; load++) {
    try {
      await frame.waitFor({ state: 'visible', timeout: 30_000 });
      break;
    } catch (err) {
      await page.screenshot({ path: join(shots, `temporal-ui-no-details-${load}.png`), fullPage: true });
      if (load === 3) throw err;
      await page.reload();
    }
  }
  // Its place and address read at once, from one element, once it has a size: the UI may render
  // the frame anew just after it showed (a CI run found no box for it a moment later).
  const read = () => frame.evaluate((el) => ({ box: el.getBoundingClientRect().toJSON() as DOMRect, src: el.getAttribute('src') }));
  let shown = await read();
  for (let tries = 0; shown.box.height === 0 && tries < 50; tries++) {
    await new Promise((r) => setTimeout(r, 200));
    shown = await read();
  }
  expect(shown.box.height).toBeGreaterThan(0);
  // On the first screen of the tab.
  expect(shown.box.y).toBeLessThan(page.viewportSize()!.height);
  return new URL(shown.src!, page.url()).searchParams.get('content')!;
}

describe('the run in the Temporal UI', () => {
  it('the User Metadata tab shows the live counts; a Ctrl-C is no failure', { timeout: 240_000 }, async () => {
    // 2,000 rollouts at concurrency 2, 100 ms each (≥ 100 s): the run is still live (its details
    // answered by its worker) however long a loaded machine takes to render the page; the Ctrl-C
    // below ends it.
    const d = await sampleRun(tempDir(), rs().port, { tasks: 500, repeats: 4 });
    const args = [...runArgs(d), '--concurrency', String(CONCURRENCY), '--batch-size', '50'];
    const child = spawn(process.execPath, [reverifyBin, ...args], {
      env: { ...process.env, ...temporal.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (t) => (out += t));
    child.stderr.on('data', (t) => (out += t));
    const exited = new Promise<number>((r) => child.on('exit', (c) => r(c ?? -1)));
    const workflowId = workflowIdForOutput(d.output);
    const handle = client().workflow.getHandle(workflowId);
    const progress = () => handle.query(progressQuery).catch(() => null as Progress | null);
    for (let p = await progress(); !(p && p.phase === 'verify' && p.done > 0); p = await progress()) {
      if (child.exitCode !== null) throw new Error(out);
      await new Promise((r) => setTimeout(r, 250));
    }
    // `reverify status` links a live run to the tab with its counts.
    const status: string[] = [];
    await statusCommand(d.output, (l) => status.push(l));
    const link = /^Temporal UI: (\S+) \(live counts: (\S+)\)$/m.exec(status.join('\n'));
    expect(link, status.join('\n')).not.toBeNull();
    expect(link![1]).toBe(workflowUiUrl(temporal.env.TEMPORAL_UI_URL, temporal.namespace, workflowId));
    const runPage = link![2].replace(/\/user-metadata$/, '');
    mkdirSync(shots, { recursive: true });
    const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'ui-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    try {
      const page = await context.newPage();
      // Live: the counts of the Current Details lie between the run's view read before and after the page.
      const before = runView((await progress())!);
      await page.goto(link![2]);
      const details = await currentDetails(page);
      const after = runView((await progress())!);
      await page.screenshot({ path: join(shots, 'temporal-ui-live.png') });
      const m = /^\*\*Rows:\*\* (\d+)\/(\d+) answered · (\d+) scored · (\d+) failed .* (\d+) in flight$/m.exec(details);
      expect(m, details).not.toBeNull();
      const [answered, planned, scored, failed, inFlight] = m!.slice(1).map(Number);
      expect(answered).toBeGreaterThanOrEqual(before.answered);
      expect(answered).toBeLessThanOrEqual(after.answered);
      // Attempts planned: the 2,000 rollouts, and the re-judgments planned so far (they start during the first pass).
      expect(before.planned).toBeGreaterThanOrEqual(2000);
      expect(planned).toBeGreaterThanOrEqual(before.planned);
      expect(planned).toBeLessThanOrEqual(after.planned);
      expect(scored + failed).toBeLessThanOrEqual(answered);
      expect(inFlight).toBeLessThanOrEqual(CONCURRENCY);
      expect(details).toMatch(/^\*\*Phase:\*\* verify/m);

      // Ctrl-C: the run waits for a worker; its history shows no failure (the batches were held, not failed).
      child.kill('SIGINT');
      expect(await exited, out).toBe(130);
      await page.goto(`${runPage}/history`);
      await page.getByText('RUNNING').first().waitFor({ timeout: 30_000 });
      await page.getByText('ActivityTaskCompleted').or(page.getByText('Activity Task Completed')).first().waitFor({ timeout: 30_000 });
      const text = await page.evaluate(() => document.body.innerText);
      await page.screenshot({ path: join(shots, 'temporal-ui-stopped.png'), fullPage: true });
      expect(text).not.toMatch(/Task ?Failed|Task ?Timed ?Out|\bFAILED\b/i);
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes)).toEqual([]);
    } finally {
      await context.close();
      await handle.terminate('test over').catch(() => undefined);
    }
  });
});
