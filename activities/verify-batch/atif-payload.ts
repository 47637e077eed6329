/** An ATIF row's `/verify` body: its trajectory read and proven to be the planned bytes, projected, and joined to its input. */
import { parseManifestLine, trajectoryFile } from '../../src/atif/manifest.js';
import { responseJson } from '../../src/atif/response.js';
import { loadTrajectory, provenanceJson } from '../../src/atif/trajectory.js';
import { readTrajectoryFile } from '../../src/atif/trajectory-file.js';
import { InputChangedError } from '../../src/contract/errors.js';
import { inputChanged } from '../../src/contract/input-changed.js';
import { buildPayload } from '../../src/contract/payload.js';
import { fileNow } from '../../src/io/file-identity.js';
import { lineDigest } from '../../src/io/line-digest.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';

/**
 * The payload (the materialized input with the projected `response`) and the provenance to stamp
 * on the result. `manifestLine` and `inputRaw` are already proven; the trajectory is proven here,
 * just before the row is sent: if its bytes are not the planned ones (length and digest), the
 * run stops (`InputChangedError`) before anything is sent for the row.
 */
export async function atifPayload(
  manifestPath: string,
  rec: PlanRecord,
  manifestLine: string,
  inputRaw: string,
): Promise<{ payload: string; provenance: string }> {
  const entry = parseManifestLine(manifestLine, rec.sourceLine, manifestPath);
  const file = trajectoryFile(manifestPath, entry.trajectoryPath);
  const bytes = await readTrajectoryFile(file).catch(() => null);
  if (bytes === null || bytes.length !== rec.trajectoryLength || lineDigest(bytes) !== rec.trajectoryDigest) {
    const planned = rec.trajectoryLength === undefined ? undefined : { size: rec.trajectoryLength };
    throw new InputChangedError(
      inputChanged(file, `the trajectory of ${manifestPath}:${rec.sourceLine}`, planned, await fileNow(file), true),
    );
  }
  const { trajectory, sourceSha256, projection } = loadTrajectory(bytes, file);
  return { payload: buildPayload(inputRaw, responseJson(projection, inputRaw)), provenance: provenanceJson(trajectory, sourceSha256) };
}
