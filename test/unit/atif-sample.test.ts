/** The demo's ATIF trajectories: valid v1.7 documents, pinned by the manifest, projecting to the rollouts' answers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifestLine, trajectoryFile } from '../../src/atif/manifest.js';
import { projectTrajectory } from '../../src/atif/project.js';
import { checkDeclaredSource, checkPinnedSha256, readTrajectory } from '../../src/atif/trajectory.js';
import { writeAtifSample } from '../../src/demo/atif-sample.js';
import { writeSampleData } from '../../src/demo/sample-data.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-atif-sample-');

describe('writeAtifSample', () => {
  it('writes one pinned, valid trajectory per rollout whose projection carries the rollout answer', async () => {
    const dir = tmp.freshDir();
    const data = await writeSampleData(dir, { tasks: 5, repeats: 2, agents: ['a', 'b'], seed: 4 });
    const { manifestPath, trajectories } = await writeAtifSample(join(dir, 'atif'), data.rolloutsPath);
    expect(trajectories).toBe(10);
    const rollouts = readFileSync(data.rolloutsPath, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const lines = readFileSync(manifestPath, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(10);
    lines.forEach((line, i) => {
      const e = parseManifestLine(line, i + 1, manifestPath);
      const file = trajectoryFile(manifestPath, e.trajectoryPath);
      const { trajectory, sourceSha256 } = readTrajectory(readFileSync(file), file);
      checkPinnedSha256(file, e.expectedSha256, sourceSha256);
      checkDeclaredSource(trajectory, { task: e.task, rollout: e.rollout });
      const rollout = rollouts[i];
      expect([e.task, e.rollout]).toEqual([rollout._ng_task_index, rollout._ng_rollout_index]);
      const message = JSON.parse(projectTrajectory(trajectory).output.at(-1)!);
      expect(message.content[0].text).toBe(rollout.response.output.at(-1).content[0].text);
    });
  });
});
