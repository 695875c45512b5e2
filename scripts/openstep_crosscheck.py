#!/usr/bin/env python3
"""Reads OpenStep files with our reader (`resumedata plist FILE --json`) and with fontTools'
`openstep_plist` (a port of CoreFoundation's parser, which we did not write), and says where they
differ. Run by scripts/openstep-crosscheck.sh, which pins the package in a venv.

Usage: openstep_crosscheck.py RESUMEDATA FILE|DIR...
"""
import base64
import json
import os
import subprocess
import sys

import openstep_plist


def ours(tool, path):
    run = subprocess.run([tool, "plist", path, "--json"], capture_output=True, timeout=60)
    if run.returncode != 0:
        return None, run.stderr.decode(errors="replace").strip()
    document = json.loads(run.stdout)
    if document["format"] != "openstep":
        return None, "read as " + document["format"]
    return plain(document["value"]), None


def plain(node):
    (kind, value), = node.items()
    if kind == "dict":
        return {key: plain(item) for key, item in value.items()}
    if kind == "array":
        return [plain(item) for item in value]
    if kind == "data":
        return base64.b64decode(value)
    return value


def theirs(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        if raw.startswith(b"\xfe\xff") or raw.startswith(b"\xff\xfe"):
            text = raw.decode("utf-16")
        else:
            text = raw.decode("utf-8-sig")
        if not text.strip() and not text:
            return None, "empty"
        return openstep_plist.loads(text), None
    except Exception as error:  # any refusal
        return None, f"{type(error).__name__}: {error}"


def main():
    tool, paths = sys.argv[1], sys.argv[2:]
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, name) for name in os.listdir(path))
        else:
            files.append(path)
    counts = {"both read, equal": 0, "both refuse": 0}
    differences = []
    for path in files:
        mine, my_error = ours(tool, path)
        other, other_error = theirs(path)
        if my_error is None and other_error is None:
            if mine == other:
                counts["both read, equal"] += 1
            else:
                differences.append((path, "values differ"))
        elif my_error is not None and other_error is not None:
            counts["both refuse"] += 1
        elif my_error is None:
            differences.append((path, f"only ours reads it; openstep_plist: {other_error}"))
        else:
            differences.append((path, f"only openstep_plist reads it; ours: {my_error}"))
    for path, what in differences:
        print(f"{path}: {what}")
    print(", ".join(f"{count} {name}" for name, count in counts.items())
          + f", {len(differences)} different, of {len(files)} files")


main()
