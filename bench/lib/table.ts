/** Plain-text tables and the environment header every bench prints. */
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { runsBundle } from '../../bin/bundle-fresh.js';
import { shebangEnv } from './procs.js';

/** Formats rows as an aligned table; numbers right-aligned. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? String(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[], isHeader: boolean) =>
    r
      .map((c, i) => (isHeader || !/^[-+]?[\d.,]+(?:[a-z%×]*)?$/.test(c) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(cells[0], true), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map((r) => line(r, false))].join('\n');
}

/**
 * One line on the machine the numbers were measured on (load matters on a shared 2-core box), and
 * on what `node bin/reverify.js` runs: the bundle, or the sources (slower to start: `npm run build`).
 */
export function machineLine(): string {
  const [l1, l5] = loadavg();
  return (
    `machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB ` +
    `(${(freemem() / 2 ** 30).toFixed(0)} free), node ${process.version}, load average ${l1.toFixed(2)} / ${l5.toFixed(2)} (1 / 5 min); ` +
    (runsBundle() ? 'reverify runs dist/cli/main.mjs' : 'reverify runs the TypeScript sources: dist/ is older than them (npm run build)') +
    `, started as bin/reverify.js (its shebang sets ${Object.entries(shebangEnv())
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')})`
  );
}

export function fixed(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}` : '-';
}
