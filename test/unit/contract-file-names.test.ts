import { describe, expect, it } from 'vitest';
import { aggregateMetricsPath, materializedInputsPath, pathStem, prefixedOutputPath, sidecarPath } from '../../src/contract/file-names.js';

describe('§1.1 file-name derivation', () => {
  it('derives every artifact of results/run.jsonl', () => {
    expect(sidecarPath('results/run.jsonl')).toBe('results/run_failures.jsonl');
    expect(materializedInputsPath('results/run.jsonl')).toBe('results/run_materialized_inputs.jsonl');
    expect(aggregateMetricsPath('results/run.jsonl')).toBe('results/run_aggregate_metrics.json');
  });

  it('--force: the prefix applies to the basename only, the rest derives from the prefixed name', () => {
    const out = prefixedOutputPath('results/run.jsonl', 'unsafe_');
    expect(out).toBe('results/unsafe_run.jsonl');
    expect(sidecarPath(out)).toBe('results/unsafe_run_failures.jsonl');
    expect(aggregateMetricsPath(out)).toBe('results/unsafe_run_aggregate_metrics.json');
    expect(prefixedOutputPath('/abs/dir.v2/out.jsonl', 'unsafe_')).toBe('/abs/dir.v2/unsafe_out.jsonl');
  });

  it('§6.82 prefix unsafe_: unsafe_out.jsonl and unsafe_out_failures.jsonl', () => {
    const out = prefixedOutputPath('out.jsonl', 'unsafe_');
    expect(out).toBe('unsafe_out.jsonl');
    expect(sidecarPath(out)).toBe('unsafe_out_failures.jsonl');
  });

  it('§6.83 no prefix: out.jsonl and out_failures.jsonl', () => {
    const out = prefixedOutputPath('out.jsonl', '');
    expect(out).toBe('out.jsonl');
    expect(sidecarPath(out)).toBe('out_failures.jsonl');
  });

  it('a.b.jsonl has stem a.b', () => {
    expect(sidecarPath('a.b.jsonl')).toBe('a.b_failures.jsonl');
    expect(aggregateMetricsPath('x/a.b.jsonl')).toBe('x/a.b_aggregate_metrics.json');
  });

  it('a path with no suffix keeps its whole name as stem', () => {
    expect(sidecarPath('out')).toBe('out_failures.jsonl');
    expect(aggregateMetricsPath('out')).toBe('out_aggregate_metrics.json');
  });

  it('the last suffix is dropped whatever it was; dotfiles and a trailing dot follow pathlib', () => {
    expect(sidecarPath('d/run.json')).toBe('d/run_failures.jsonl');
    expect(pathStem('.hidden')).toBe('.hidden');
    expect(pathStem('out.')).toBe('out.');
    expect(pathStem('/x/y/rollouts.jsonl')).toBe('rollouts');
  });

  it('judge-failed-only source sidecar: results/rollouts.jsonl -> results/rollouts_failures.jsonl', () => {
    expect(sidecarPath('results/rollouts.jsonl')).toBe('results/rollouts_failures.jsonl');
  });
});
