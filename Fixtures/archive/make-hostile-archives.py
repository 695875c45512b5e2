#!/usr/bin/env python3
"""Writes the hostile keyed archives in Fixtures/archive/hostile/ (Python 3 standard library only).

Run from the repository root:  python3 Fixtures/archive/make-hostile-archives.py

Each archive is a well-formed binary property list whose keyed-archive structure is hostile: a cycle,
a bad class reference, an out-of-range UID, exponential sharing, a deep reference chain, or a broken
envelope. Dictionaries keep the key order written here (sort_keys=False), so that the key path of the
first problem is fixed. Tests/KeyedArchiveTests/HostileArchiveTests.swift names the error expected of
each.
"""

import os
import plistlib
from plistlib import UID

FOLDER = os.path.join("Fixtures", "archive", "hostile")

NSARRAY = {"$classname": "NSArray", "$classes": ["NSArray", "NSObject"]}
NSDICTIONARY = {"$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]}


def envelope(objects, top=None):
    """The envelope NSKeyedArchiver writes, with the root under `root` (as Linux Foundation does)."""
    return {
        "$archiver": "NSKeyedArchiver",
        "$objects": objects,
        "$top": {"root": UID(1)} if top is None else top,
        "$version": 100000,
    }


def array(class_uid, *element_uids):
    """An NSArray instance referencing the given UIDs."""
    return {"$class": UID(class_uid), "NS.objects": [UID(u) for u in element_uids]}


def chain(levels, fan_out, leaf):
    """`levels` NSArrays at UIDs 1...levels, each holding the next `fan_out` times; the last holds the
    object after it (`leaf`, or nothing when None) `fan_out` times. The class object comes last."""
    class_uid = levels + 1 + (leaf is not None)
    objects = ["$null"]
    for level in range(1, levels + 1):
        if level < levels or leaf is not None:
            objects.append(array(class_uid, *[level + 1] * fan_out))
        else:
            objects.append(array(class_uid))
    if leaf is not None:
        objects.append(leaf)
    objects.append(NSARRAY)
    return envelope(objects)


ARCHIVES = {
    # An NSArray whose only element is itself.
    "cycle": envelope(["$null", array(2, 1), NSARRAY]),
    # An instance whose $class names the instance itself.
    "self-class": envelope(["$null", {"$class": UID(1), "NS.objects": []}]),
    # The second element of an NSArray names object 9 of 3.
    "uid-out-of-range": envelope(["$null", array(2, 1, 9), NSARRAY]),
    # $class names a string, not a class object.
    "class-is-string": envelope(["$null", array(2), "NSArray"]),
    # 40 levels of NSArray, each holding the next level twice: 2^41 - 1 visits to expand.
    "exponential-sharing": chain(40, 2, "leaf"),
    # 10,000 NSArrays, each holding the next; the last is empty.
    "deep-chain": chain(10_000, 1, None),
    # No $top at all.
    "missing-top": {
        "$archiver": "NSKeyedArchiver",
        "$objects": ["$null", "root string"],
        "$version": 100000,
    },
    # $top present but naming no root.
    "empty-top": envelope(["$null", "root string"], top={}),
    # $objects is a dictionary.
    "objects-not-array": envelope({"$null": "root string"}),
    # An NSDictionary with two keys and one object.
    "keys-objects-mismatch": envelope(
        [
            "$null",
            {"$class": UID(5), "NS.keys": [UID(2), UID(3)], "NS.objects": [UID(4)]},
            "first",
            "second",
            "value",
            NSDICTIONARY,
        ]
    ),
}


def main():
    os.makedirs(FOLDER, exist_ok=True)
    for name, archive in ARCHIVES.items():
        data = plistlib.dumps(archive, fmt=plistlib.FMT_BINARY, sort_keys=False)
        with open(os.path.join(FOLDER, name + ".archive"), "wb") as file:
            file.write(data)


if __name__ == "__main__":
    main()
