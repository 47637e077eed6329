"""Reads an offline W&B run back for the tests: the run's `.wandb` transaction log, decoded with W&B's
own protobuf messages (`wandb.proto.wandb_internal_pb2.Record`). wandb 0.31 no longer ships a Python
reader for the log (`wandb.sdk.internal.datastore` was removed with the move to wandb-core), so the
framing (W&B's 7-byte file header, then LevelDB log blocks of 32 KiB with 7-byte record headers) is
undone here; every record's content is W&B's. Prints one JSON object on stdout:
{"run": {...}, "config": {...}, "history": [{...}, ...], "summary": {...}, "tables": {path: json}}.
Usage: python wandb-offline-read.py RUN_DIR
"""

import glob
import json
import os
import struct
import sys

from wandb.proto import wandb_internal_pb2 as pb

BLOCK = 32768
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    ident, magic, version = struct.unpack("<4sHB", data[:7])
    if ident != b":W&B" or magic != 0xBEE1:
        raise SystemExit(f"{path}: not a W&B transaction log")
    pos, pending = 7, b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + HEADER])
        body = data[pos + HEADER : pos + HEADER + length]
        pos += HEADER + length
        if kind == 0 and length == 0:
            pos += BLOCK - pos % BLOCK if pos % BLOCK else 0
            continue
        if kind == FULL:
            yield body
        elif kind == FIRST:
            pending = body
        elif kind == MIDDLE:
            pending += body
        elif kind == LAST:
            yield pending + body
            pending = b""


def items(entries):
    return {"/".join(e.nested_key) if e.nested_key else e.key: json.loads(e.value_json) for e in entries}


def main(run_dir):
    (log,) = glob.glob(os.path.join(run_dir, "run-*.wandb"))
    out = {"run": None, "config": {}, "history": [], "summary": {}, "tables": {}}
    for raw in records(log):
        record = pb.Record()
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            r = record.run
            out["run"] = {"run_id": r.run_id, "project": r.project, "display_name": r.display_name}
            out["config"].update(items(r.config.update))
        elif kind == "config":
            out["config"].update(items(record.config.update))
        elif kind == "history":
            out["history"].append(items(record.history.item))
        elif kind == "summary":
            out["summary"].update(items(record.summary.update))
    for path in glob.glob(os.path.join(run_dir, "files", "media", "table", "*.table.json")):
        with open(path, encoding="utf-8") as f:
            out["tables"][os.path.relpath(path, os.path.join(run_dir, "files"))] = json.load(f)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
