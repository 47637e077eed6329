/**
 * `<state>/server.json`, the record of the running server: read (a corrupt file counts as absent)
 * and written atomically.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { DevServerRecord } from './types.js';

export function readRecord(file: string): DevServerRecord | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const r = JSON.parse(raw) as Partial<DevServerRecord>;
    if (typeof r.pid === 'number' && typeof r.port === 'number' && typeof r.uiPort === 'number' && typeof r.dbPath === 'string') {
      return {
        pid: r.pid,
        port: r.port,
        uiPort: r.uiPort,
        dbPath: r.dbPath,
        version: typeof r.version === 'string' ? r.version : 'unknown',
        binary: typeof r.binary === 'string' ? r.binary : 'temporal',
        startedAt: typeof r.startedAt === 'string' ? r.startedAt : '',
      };
    }
  } catch {
    // corrupt: treated as absent
  }
  return undefined;
}

export function writeRecord(file: string, record: DevServerRecord): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, file);
}
