/**
 * The modules of workflows/ import one another in one direction: no circle, type-only imports
 * included (a reader following one would come back where they started). reverify-run.ts is the
 * top; the phases, the round's window and the state sit below it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ReverifyRunWorkflow } from '../../workflows/definitions.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { projectRoot } from '../helpers/worker-process.js';

const dir = join(projectRoot, 'workflows');

/** `./name.js` imports and re-exports of a module, as module names (`name.ts`). */
function localImports(source: string): string[] {
  const found = source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'\.\/([\w.-]+)\.js'/gms);
  return [...new Set([...found].map((m) => `${m[1]}.ts`))];
}

/** A circle of the graph as a path that ends where it starts, or null. */
function findCircle(graph: Map<string, string[]>): string[] | null {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    const at = path.indexOf(node);
    if (at >= 0) return [...path.slice(at), node];
    if (done.has(node)) return null;
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    done.add(node);
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    const circle = visit(node);
    if (circle) return circle;
  }
  return null;
}

describe('workflows/ imports', () => {
  it('finds a circle when there is one, and the imports of both forms', () => {
    expect(localImports(`import type { A } from './a.js';\nexport { b } from './b.js';\nimport {\n  c,\n} from './c.js';\n`)).toEqual([
      'a.ts',
      'b.ts',
      'c.ts',
    ]);
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(findCircle(graph)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    graph.set('c.ts', []);
    expect(findCircle(graph)).toBeNull();
  });

  it('form no circle', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    const graph = new Map(files.map((f) => [f, localImports(readFileSync(join(dir, f), 'utf8'))]));
    expect(graph.get('reverify-run.ts')).toContain('verify-round.ts');
    expect(findCircle(graph)).toBeNull();
  });

  it("the signature continue-as-new is checked against is the workflow's own (tsc checks it)", () => {
    expectTypeOf<typeof reverifyRun>().toEqualTypeOf<ReverifyRunWorkflow>();
  });
});
