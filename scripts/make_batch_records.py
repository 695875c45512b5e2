#!/usr/bin/env python3
"""Writes an NDJSON file of mixed `resumedata batch` records made from Fixtures/, for the Spark
and GNU parallel integration (scripts/spark-integration.sh).

Every resume blob kind in Fixtures/resume and Fixtures/repair, as inline base64 and as `path`
records (absolute paths), and 10 % bad records: lines that are not JSON or not records, blobs that
are not strict base64, paths that cannot be read, and malformed or refused blobs (the truncated
and hostile fixtures, plists that are not resume data, the iOS 12 empty blob). Each record has a
unique string id, `r` and its line number; the lines that are not JSON at all carry none (their
results have `"id": null`). The same seed gives the same file, byte for byte.

Usage: make_batch_records.py FIXTURES_DIR WORK_DIR OUT.ndjson [COUNT]
Prints one JSON line of counts per kind of record.
"""
import argparse
import base64
import json
import os
import random

parser = argparse.ArgumentParser(
    description="Writes an NDJSON file of mixed `resumedata batch` records made from Fixtures/ "
    "(every blob kind inline and as paths, 10 % bad records); prints one JSON line of counts "
    "per kind of record. The same arguments give the same file, byte for byte.")
parser.add_argument("fixtures", metavar="FIXTURES_DIR", help="the repository's Fixtures directory")
parser.add_argument("work", metavar="WORK_DIR", help="a directory for the files `path` records name")
parser.add_argument("out", metavar="OUT.ndjson", help="the file to write")
parser.add_argument("count", metavar="COUNT", type=int, nargs="?", default=200_000,
                    help="how many records (default 200000)")
arguments = parser.parse_args()
fixtures, work, out = (os.path.abspath(a) for a in (arguments.fixtures, arguments.work, arguments.out))
count = arguments.count
if count < 0:
    parser.error("COUNT must not be negative")
rng = random.Random(47)


def files(*subdirs):
    found = []
    for sub in subdirs:
        d = os.path.join(fixtures, sub)
        found += [os.path.join(d, n) for n in sorted(os.listdir(d)) if os.path.isfile(os.path.join(d, n))]
    return found


# Blobs that are resume data (every generation and container the fixtures have, and the repaired
# ones), and the blobs that batch refuses or cannot read (bad records).
refused = os.path.join(fixtures, "resume", "ios12-empty.archive")
good = [f for f in files("resume", "repair") if f != refused]
malformed = [refused] + files("resume/truncated", "plist/hostile") + [
    f for f in files("plist") if f.endswith(".plist")]
blob_of = {f: base64.b64encode(open(f, "rb").read()).decode() for f in good + malformed}

# Unreadable paths: a file that does not exist, a directory, a file without read permission (root
# reads it anyway, so it is not used: CI runs as root), a path through a file.
missing = os.path.join(work, "missing", "resume.plist")
unreadable = [missing, work, os.path.join(good[0], "inside")]

kinds = {}


def record(n):
    rid = "r%06d" % n
    if rng.random() < 0.10:  # a bad record
        k = rng.randrange(4)
        if k == 0:  # not JSON, or not a record
            kind, line = rng.choice([
                ("not-json", "not a record %s" % rid),
                ("not-json", "%s,blob,path" % rid),
                ("truncated-json", '{"id":"%s","blob":' % rid),
                ("not-object", '["%s"]' % rid),
                ("no-blob", json.dumps({"id": rid, "blob_": "x"})),
                ("blob-not-string", json.dumps({"id": rid, "blob": 12})),
            ])
        elif k == 1:  # not strict base64
            b = blob_of[rng.choice(good)]
            i = rng.randrange(len(b) - 4)
            kind, bad = rng.choice([
                ("base64-char", b[:i] + "-" + b[i + 1:]),
                ("base64-space", b[:i] + " " + b[i:]),
                ("base64-length", b[:-1] if not b.endswith("=") else b[:-2]),
                ("base64-url", b.replace("+", "-").replace("/", "_") if ("+" in b or "/" in b) else b + "*"),
            ])
            line = json.dumps({"id": rid, "blob": bad})
        elif k == 2:  # a path that cannot be read
            kind, line = "unreadable-path", json.dumps({"id": rid, "path": rng.choice(unreadable)})
        else:  # a malformed or refused blob, inline or by path
            f = rng.choice(malformed)
            if rng.random() < 0.5:
                kind, line = "malformed-blob", json.dumps({"id": rid, "blob": blob_of[f]})
            else:
                kind, line = "malformed-path", json.dumps({"id": rid, "path": f})
    else:
        f = rng.choice(good)
        if rng.random() < 0.5:
            kind, line = "blob", json.dumps({"id": rid, "blob": blob_of[f]}, separators=(",", ":"))
        else:
            kind, line = "path", json.dumps({"id": rid, "path": f})
    kinds[kind] = kinds.get(kind, 0) + 1
    return line


with open(out, "w") as o:
    for n in range(1, count + 1):
        o.write(record(n) + "\n")
bad = sum(v for k, v in kinds.items() if k not in ("blob", "path"))
print(json.dumps({"records": count, "bad": bad, "blob kinds": len(good), "malformed kinds": len(malformed),
                  "kinds": dict(sorted(kinds.items()))}))
