"""Writes a NeMo Gym managed run as its run store (newer NeMo Gym's rollouts.rollout_store) leaves it,
built from the store page's description and the manifest's field list: <stem>_materialized_inputs.jsonl,
<stem>_manifest.json (schema_version 2, selection_policy latest_allocated, next_attempt owning the
execution numbers, run_id, digests; written as indented JSON with a final newline), and the outcomes
appended in order to <stem>.jsonl (results) or <stem>_failures.jsonl (sidecar), one compact JSON
line each. The materialized digest is sha256 of json.dumps(rows, sort_keys=True, separators=(",", ":"),
ensure_ascii=False). Spec on stdin as JSON: {dir, stem, materialized, next_attempt, run_id, outcomes:
[{file: "results"|"failures", row}], manifest: bool, tail: {file, text}?}."""
import hashlib
import json
import sys
from pathlib import Path

spec = json.load(sys.stdin)
d = Path(spec["dir"])
stem = spec.get("stem", "out")


def line(row):
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"


rows = spec["materialized"]
(d / f"{stem}_materialized_inputs.jsonl").write_text("".join(line(r) for r in rows), encoding="utf-8")
if spec.get("manifest", True):
    digest = hashlib.sha256(
        json.dumps(rows, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    ).hexdigest()
    manifest = {
        "schema_version": 2,
        "selection_policy": "latest_allocated",
        "next_attempt": spec["next_attempt"],
        "run_id": spec["run_id"],
        "source_digest": "0" * 64,
        "materialized_digest": digest,
        "config_digest": "1" * 64,
        "legacy_import": False,
        "identity_overridden": False,
    }
    (d / f"{stem}_manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
files = {"results": d / f"{stem}.jsonl", "failures": d / f"{stem}_failures.jsonl"}
for f in files.values():
    f.touch()
for outcome in spec["outcomes"]:
    with files[outcome["file"]].open("a", encoding="utf-8") as f:
        f.write(line(outcome["row"]))
if spec.get("tail"):
    with files[spec["tail"]["file"]].open("a", encoding="utf-8") as f:
        f.write(spec["tail"]["text"])
