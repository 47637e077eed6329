/**
 * The report's HTML in real headless Chromium (playwright-core on the system's /usr/bin/chromium):
 * a page that records console errors, page errors and any request that is not a file, and what
 * each Chart.js canvas drew.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The HTML file opened in a fresh browser context; close the context when done. */
export async function openPage(html: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'report-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
  });
  await page.goto(pathToFileURL(html).href);
  return { context, page, problems };
}

/** Per chart canvas: whether it exists, the points of its chart's datasets (−1: no chart) and its painted pixels. */
export function chartsDrawn(
  page: Page,
  ids: readonly string[],
): Promise<{ id: string; canvas: boolean; points: number; painted: number }[]> {
  return page.evaluate(
    (ids) => {
      const chartJs = (
        window as unknown as {
          Chart: { getChart(c: HTMLCanvasElement): { data: { datasets: Array<{ data: unknown[] }> } } | undefined };
        }
      ).Chart;
      return ids.map((id) => {
        const canvas = document.getElementById(id) as HTMLCanvasElement | null;
        const chart = canvas ? chartJs.getChart(canvas) : undefined;
        const pixels = canvas?.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) painted++;
        return { id, canvas: canvas !== null, points: chart ? chart.data.datasets.reduce((s, d) => s + d.data.length, 0) : -1, painted };
      });
    },
    [...ids],
  );
}
