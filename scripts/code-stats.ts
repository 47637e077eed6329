/**
 * Code size figures for the simplicity goals (docs/architecture.md): non-test lines per folder,
 * the largest files and functions, and the rules' violations (functions over 80 lines in
 * workflows/ and activities/, product files over 300 lines, `patched()` calls).
 * Run: `npx tsx scripts/code-stats.ts [--json]`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = new URL('..', import.meta.url).pathname;
const FOLDERS = ['src', 'activities', 'workflows', 'bin', 'scripts', 'bench', 'test'];
const PRODUCT = new Set(['src', 'activities', 'workflows', 'bin', 'scripts']);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    // Generated files (bench/out, git-ignored) are not code anyone wrote.
    if (statSync(path).isDirectory()) {
      if (relative(ROOT, path) !== join('bench', 'out')) out.push(...files(path));
    } else if (/\.(ts|mjs|js)$/.test(name)) out.push(path);
  }
  return out;
}

interface Fn {
  file: string;
  name: string;
  lines: number;
}

function functionsOf(file: string, text: string): Fn[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Fn[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      let name = node.name?.getText(source) ?? '';
      if (!name && ts.isVariableDeclaration(node.parent)) name = node.parent.name.getText(source);
      if (!name && ts.isPropertyAssignment(node.parent)) name = node.parent.name.getText(source);
      found.push({ file, name: name || '(anonymous)', lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const perFolder: Record<string, number> = {};
const sizes: { file: string; lines: number }[] = [];
const fns: Fn[] = [];
let patchedCalls = 0;
for (const folder of FOLDERS) {
  for (const path of files(join(ROOT, folder))) {
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n').length;
    const file = relative(ROOT, path);
    perFolder[folder] = (perFolder[folder] ?? 0) + lines;
    if (!PRODUCT.has(folder)) continue;
    sizes.push({ file, lines });
    patchedCalls += (text.match(/\b(?:deprecateP|p)atched\(\s*['"`]/g) ?? []).length;
    if (/\.ts$/.test(path)) fns.push(...functionsOf(file, text));
  }
}
sizes.sort((a, b) => b.lines - a.lines);
fns.sort((a, b) => b.lines - a.lines);
const report = {
  linesPerFolder: perFolder,
  largestFiles: sizes.slice(0, 10),
  largestFunctions: fns.slice(0, 10),
  filesOver300: sizes.filter((s) => s.lines > 300),
  functionsOver80InWorkflowsAndActivities: fns.filter((f) => f.lines > 80 && /^(workflows|activities)\//.test(f.file)),
  patchedCalls,
  readmeLines: readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
else {
  console.log('non-test lines per folder:', report.linesPerFolder);
  console.log('\nlargest files:');
  for (const s of report.largestFiles) console.log(`  ${s.lines}\t${s.file}`);
  console.log('\nlargest functions:');
  for (const f of report.largestFunctions) console.log(`  ${f.lines}\t${f.file} ${f.name}`);
  console.log(`\nproduct files over 300 lines: ${report.filesOver300.map((s) => `${s.file} (${s.lines})`).join(', ') || 'none'}`);
  console.log(
    `functions over 80 lines in workflows/ and activities/: ${
      report.functionsOver80InWorkflowsAndActivities.map((f) => `${f.file} ${f.name} (${f.lines})`).join(', ') || 'none'
    }`,
  );
  console.log(`patched() calls: ${report.patchedCalls}`);
  console.log(`README lines: ${report.readmeLines}`);
}
