/**
 * The names a run makes from `--output` must fit the file system's limits (NAME_MAX 255 bytes per
 * name in UTF-8, with the temporary suffix of files written atomically; PATH_MAX for the path),
 * or the run is refused before anything is written (issue 34 item 1).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { derivedFiles } from '../../src/contract/file-names.js';
import {
  LONGEST_TEMP_SUFFIX,
  NAME_MAX,
  overlongNameProblem,
  PATH_MAX,
  refuseOverlongNames,
  WORK_DIR_ENTRY_RESERVE,
} from '../../src/contract/name-limits.js';

/** The longest stem whose aggregate metrics file, with its temporary suffix, still fits. */
const LONGEST_STEM = NAME_MAX - '_aggregate_metrics.json'.length - LONGEST_TEMP_SUFFIX.length;

describe('names derived from --output against NAME_MAX', () => {
  it('every derived name is listed: output, sidecar, metrics, coverage, unstarted, noise, history, run lock and its driver lease, report, work directory', () => {
    expect(derivedFiles('/d/out.jsonl').map((f) => f.path)).toEqual([
      '/d/out.jsonl',
      '/d/out_failures.jsonl',
      '/d/out_aggregate_metrics.json',
      '/d/out_coverage.json',
      '/d/out_unstarted.jsonl',
      '/d/out_noise.jsonl',
      '/d/out_history.json',
      '/d/out_run.lock',
      '/d/.out_run.lock.driver',
      '/d/out_report.html',
      '/d/.out.jsonl.reverify',
    ]);
  });

  it('the longest stem that fits passes; one byte more names the metrics file, its size and the limit', () => {
    expect(overlongNameProblem(`/d/${'a'.repeat(LONGEST_STEM)}.jsonl`, '')).toBeNull();
    const name = `${'a'.repeat(LONGEST_STEM + 1)}_aggregate_metrics.json`;
    expect(overlongNameProblem(`/d/${'a'.repeat(LONGEST_STEM + 1)}.jsonl`, '')).toBe(
      `the aggregate metrics file '/d/${name}' would have a name of 256 bytes (with its temporary suffix '${LONGEST_TEMP_SUFFIX}'), ` +
        `over the file system's limit of 255 bytes per name: choose a shorter --output name`,
    );
  });

  it('the unsafe_ prefix of --force counts', () => {
    const out = `/d/${'a'.repeat(LONGEST_STEM - 7)}.jsonl`;
    expect(overlongNameProblem(out, '')).toBeNull();
    expect(overlongNameProblem(out, 'unsafe_')).toBeNull();
    expect(overlongNameProblem(`/d/${'a'.repeat(LONGEST_STEM - 6)}.jsonl`, 'unsafe_')).toMatch(
      /^the aggregate metrics file '\/d\/unsafe_a+_aggregate_metrics\.json' would have a name of 256 bytes/,
    );
  });

  it('bytes in UTF-8, not characters: a 2-byte character counts twice', () => {
    expect(LONGEST_STEM % 2).toBe(0);
    expect(overlongNameProblem(`/d/${'é'.repeat(LONGEST_STEM / 2)}.jsonl`, '')).toBeNull();
    expect(overlongNameProblem(`/d/${'é'.repeat(LONGEST_STEM / 2)}b.jsonl`, '')).toMatch(/name of 256 bytes/);
  });

  it('a long suffix: the work directory `.<name>.reverify` is the longest name', () => {
    // stem `a`: the metrics file is short, but the output's base name is 246 bytes.
    const base = `a.${'x'.repeat(NAME_MAX - 11)}`;
    expect(overlongNameProblem(`/d/${base}`, '')).toMatch(
      new RegExp(`^the work directory '/d/\\.${base}\\.reverify' would have a name of 256 bytes, over the file system's limit`),
    );
  });

  it('a directory of the path over the limit: named, with "choose a shorter --output path"', () => {
    const dir = `/${'d'.repeat(NAME_MAX + 1)}`;
    expect(overlongNameProblem(`${dir}/out.jsonl`, '')).toBe(
      `the directory '${dir}' of the output would have a name of 256 bytes, over the file system's limit of 255 bytes per name: ` +
        'choose a shorter --output path',
    );
  });

  it('PATH_MAX: the whole path, with room for the files in the work directory', () => {
    const deep = '/' + Array.from({ length: 38 }, () => 'd'.repeat(100)).join('/') + `/${'e'.repeat(17)}`;
    // The work directory `<deep>/.<x…>.reverify`, the room kept in it and the path's NUL make PATH_MAX.
    const fits = `${deep}/${'x'.repeat(PATH_MAX - deep.length - '/..reverify'.length - WORK_DIR_ENTRY_RESERVE - 1)}`;
    expect(overlongNameProblem(fits, '')).toBeNull();
    expect(overlongNameProblem(`${fits}x`, '')).toMatch(
      /^the work directory '.*' would have a path of 4096 bytes \(with 128 bytes kept for the files in it\), over the file system's limit of 4095 bytes per path: choose a shorter --output path$/,
    );
  });

  it('refuseOverlongNames throws the line as a ConfigError (printed `Error: …`, exit 1)', () => {
    expect(() => refuseOverlongNames(`/d/${'a'.repeat(250)}.jsonl`, '')).toThrow(ConfigError);
    expect(() => refuseOverlongNames('/d/out.jsonl', '')).not.toThrow();
  });
});
