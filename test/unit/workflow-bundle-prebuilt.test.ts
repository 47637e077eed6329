/**
 * The workflow bundle `npm run build` makes (src/temporal/workflow-bundle.ts): a worker uses it
 * when it is the bundle of the current workflow code, and the cache in the state dir otherwise;
 * a build replaces the bundles of earlier sources.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUNDLE_SOURCE_DIRS,
  prebuildWorkflowBundle,
  workflowBundleName,
  workflowBundlePath,
  workflowsPath,
} from '../../src/temporal/workflow-bundle.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const root = useTempRoot('reverify-prebuilt-bundle-');

/** The project's source files the workflow code imports values from, transitively (type-only imports are erased). */
function bundledSources(): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)(?! type)[^;]*?from '(\.[^']+)'/gms)) {
      visit(resolve(dirname(file), m[1].replace(/\.js$/, '.ts')));
    }
  };
  visit(workflowsPath);
  return seen;
}

describe('the prebuilt workflow bundle', () => {
  it('is what a worker loads when it is of the current workflow code: nothing is bundled into the cache', async () => {
    const prebuilt = root.freshDir();
    const cache = root.freshDir();
    const current = join(prebuilt, workflowBundleName());
    writeFileSync(current, '// the bundle npm run build made\n');
    expect(await workflowBundlePath(cache, prebuilt)).toBe(current);
    expect(existsSync(join(cache, 'bundles'))).toBe(false);
  });

  it('is not used when it is of other sources (the cached bundle is)', async () => {
    const prebuilt = root.freshDir();
    const cache = root.freshDir();
    writeFileSync(join(prebuilt, 'workflows-0000000000000000.js'), '// of earlier sources\n');
    const cached = join(cache, 'bundles', workflowBundleName());
    mkdirSync(join(cache, 'bundles'));
    writeFileSync(cached, '// cached\n');
    expect(await workflowBundlePath(cache, prebuilt)).toBe(cached);
  });

  it('is named by a hash of every source it is built from: each module the workflow code imports lies in a hashed directory', () => {
    const sources = [...bundledSources()];
    expect(sources.some((f) => f.includes(`${join('src', 'config')}`))).toBe(true);
    for (const f of sources) expect(BUNDLE_SOURCE_DIRS.some((d) => dirname(f) === d)).toBe(true);
  });

  it('replaces the bundles of earlier sources at a build', async () => {
    const prebuilt = root.freshDir();
    writeFileSync(join(prebuilt, workflowBundleName()), '// current\n');
    writeFileSync(join(prebuilt, 'workflows-0000000000000000.js'), '// of earlier sources\n');
    writeFileSync(join(prebuilt, 'README'), 'kept\n');
    expect(await prebuildWorkflowBundle(prebuilt)).toBe(join(prebuilt, workflowBundleName()));
    expect(readdirSync(prebuilt).sort()).toEqual(['README', workflowBundleName()].sort());
  });
});
