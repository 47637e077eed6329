/**
 * The ATIF projection against NeMo Gym 0.7.0's own output on the same files
 * (test/fixtures/atif/golden.json, made by make-golden.py): the exact `response` text sent to
 * /verify for each valid trajectory, and the refusal of each malformed one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectTrajectory } from '../../src/atif/project.js';
import { responseJson } from '../../src/atif/response.js';
import { AtifProjectionError } from '../../src/atif/supported.js';
import { provenanceJson, readTrajectory } from '../../src/atif/trajectory.js';

const DIR = join(import.meta.dirname, '../fixtures/atif');
const golden = JSON.parse(readFileSync(join(DIR, 'golden.json'), 'utf8')) as Record<
  string,
  { response?: string; sha256?: string; error?: string }
>;
const input = readFileSync(join(DIR, 'materialized-input.json'), 'utf8').trim();

function project(name: string): { response: string; sha256: string } {
  const { trajectory, sourceSha256 } = readTrajectory(readFileSync(join(DIR, name)), '<path>');
  return { response: responseJson(projectTrajectory(trajectory), input), sha256: sourceSha256 };
}

function refusal(name: string): string {
  try {
    project(name);
  } catch (err) {
    expect(err).toBeInstanceOf(AtifProjectionError);
    return (err as Error).message;
  }
  throw new Error(`${name} was projected`);
}

const valid = Object.entries(golden).filter(([, g]) => g.response !== undefined);
const refused = Object.entries(golden).filter(([, g]) => g.error !== undefined);

describe('ATIF v1.7 projection (golden: NeMo Gym 0.7.0 on the same fixtures)', () => {
  it.each(valid)('%s: the same response text and source SHA-256', (name, g) => {
    expect(project(name)).toEqual({ response: g.response, sha256: g.sha256 });
  });

  // Where 0.7.0 prints pydantic's multi-line report, ours is one line with the same meaning.
  const pydantic = (e: string) => e.includes('validation error for');
  it.each(refused.filter(([, g]) => !pydantic(g.error!)))('%s: refused with 0.7.0 text', (name, g) => {
    expect(refusal(name)).toBe(g.error);
  });

  it.each([
    ['malformed/wrong-version.json', "invalid ATIF trajectory <path>: schema_version: Input should be 'ATIF-v1.7'"],
    ['malformed/missing-steps.json', 'invalid ATIF trajectory <path>: steps: Field required'],
    ['malformed/empty-steps.json', 'invalid ATIF trajectory <path>: steps: List should have at least 1 item after validation, not 0'],
    ['malformed/extra-field.json', 'invalid ATIF trajectory <path>: rating: Extra inputs are not permitted'],
    ['malformed/not-object.json', 'invalid ATIF trajectory <path>: Input should be a valid dictionary'],
    ['malformed/step-id-gap.json', 'invalid ATIF trajectory <path>: steps[1].step_id: expected 2 (sequential from 1), got 3'],
  ])('%s: schema problems are one line naming the field', (name, message) => {
    expect(golden[name].error).toContain('validation error for');
    expect(refusal(name)).toBe(message);
  });

  it('the provenance stamped on results names the trajectory, its bytes and schema', () => {
    const bytes = readFileSync(join(DIR, 'text-only.json'));
    const { trajectory, sourceSha256 } = readTrajectory(bytes, 'x');
    expect(JSON.parse(provenanceJson(trajectory, sourceSha256))).toEqual({
      trajectory_id: 'relay-session-7:0:0',
      session_id: 'relay-session-7',
      source_sha256: golden['text-only.json'].sha256,
      schema_version: 'ATIF-v1.7',
      projection_status: 'complete',
    });
  });

  it('knows which trajectories call tools (the MCP-exposure check needs it)', () => {
    const calls = (name: string) => projectTrajectory(readTrajectory(readFileSync(join(DIR, name)), name).trajectory).hasFunctionCalls;
    expect([calls('text-only.json'), calls('tool-calls.json'), calls('list-observation.json')]).toEqual([false, true, true]);
  });

  it('an input row without a responses_create_params object is refused', () => {
    const { trajectory } = readTrajectory(readFileSync(join(DIR, 'text-only.json')), 'x');
    expect(() => responseJson(projectTrajectory(trajectory), '{"_ng_task_index":0}')).toThrow(
      'materialized input has no responses_create_params object',
    );
  });
});
