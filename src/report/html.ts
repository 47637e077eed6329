/**
 * The report as one self-contained HTML file: Chart.js's UMD bundle (read from node_modules at run
 * time) and the report's numbers as JSON, both inline, so nothing is fetched when it is viewed.
 * The page scripts (report-page.js, then report-page-stats.js, next to this file) build the tables and
 * the charts from the JSON.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReportData } from './report-data.js';

/** The canvases of the charts, by id; the browser test checks each one. */
export const CHART_IDS = ['chart-distribution', 'chart-flips', 'chart-latency', 'chart-progress', 'chart-estimate'] as const;

/** Chart.js's UMD bundle, from the installed package. */
function chartJsBundle(): string {
  const main = createRequire(import.meta.url).resolve('chart.js');
  return readFileSync(join(dirname(main), 'chart.umd.js'), 'utf8');
}

/** A script of the page, src/report/<name> (by a root-relative path: this also runs bundled, from dist/cli/). */
function pageScript(name: 'report-page.js' | 'report-page-stats.js'): string {
  return readFileSync(fileURLToPath(new URL(`../../src/report/${name}`, import.meta.url)), 'utf8');
}

/** Text safe inside a <script> element. */
const inScript = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1');
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; } .chart { height: 280px; position: relative; }
.note { color: #666; } code { background: #f3f3f3; padding: 0 3px; }`;

export function reportHtml(data: ReportData): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const charts = CHART_IDS.map((id) => `<div class="chart"><canvas id="${id}"></canvas></div>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>reverify report: ${escapeHtml(data.output)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Re-verification report</h1>
<p>Main output <code>${escapeHtml(data.output)}</code> against the rewards of <code>${escapeHtml(data.rollouts)}</code>${
    data.oldSidecar ? ` (and, for the keys it lacks, of the recovery run's input <code>${escapeHtml(data.oldSidecar)}</code>)` : ''
  }.</p>
<div id="summary"></div>
<div class="charts">
${charts}
</div>
<div id="statistics"></div>
<div id="tables"></div>
<script id="report-data" type="application/json">${json}</script>
<script>${inScript(chartJsBundle())}</script>
<script>${inScript(pageScript('report-page.js'))}</script>
<script>${inScript(pageScript('report-page-stats.js'))}</script>
</body>
</html>
`;
}
