#!/usr/bin/env python3
"""Python's plistlib as a benchmark peer of `resumedata-bench peers`: times decoding or encoding one
property list file (plistlib.loads / plistlib.dumps, standard library only), the way
`resumedata-bench plist` times ours, and prints one line: the best seconds per call and the number
of values decoded.

usage: plistlib_peer.py [--rounds N] [--round-time S] [--budget S] [--calls N] FILE binary|xml decode|encode

Values are counted as resumedata-bench counts them: every value once, containers included,
dictionary keys not. Decoding is given the format (no detection); encoding writes the value decoded
once beforehand with sort_keys=False (ours and libplist keep a dictionary's order; plistlib's
default would sort every dictionary's keys first). With --calls N nothing is timed: N calls are
made and `0 <values>` printed, for callgrind to count (N against 0).
"""
import argparse
import math
import plistlib
import sys
import time


def count_values(value):
    if isinstance(value, dict):
        return 1 + sum(count_values(child) for child in value.values())
    if isinstance(value, list):
        return 1 + sum(count_values(child) for child in value)
    return 1


def best_seconds_per_call(call, rounds, round_time, budget):
    """As resumedata-bench's bestSecondsPerCall: a warm-up call (the first round when it alone
    outlasts one), then rounds of at least round_time each, the clock read every `batch` calls, no
    round started once `budget` seconds have gone; the fastest round's average."""
    clock = time.perf_counter
    warm_up_start = clock()
    call()
    warm_up = clock() - warm_up_start
    best = math.inf
    if warm_up >= round_time:
        best = warm_up
        rounds -= 1
    for round_index in range(rounds):
        if (round_index > 0 or math.isfinite(best)) and clock() - warm_up_start >= budget:
            break
        made = 0
        batch = 1
        start = clock()
        while True:
            for _ in range(batch):
                call()
            made += batch
            elapsed = clock() - start
            if elapsed < round_time / 100:
                batch *= 2
            if elapsed >= round_time:
                break
        best = min(best, elapsed / made)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--round-time", type=float, default=0.3)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("file")
    parser.add_argument("format", choices=["binary", "xml"])
    parser.add_argument("operation", choices=["decode", "encode"])
    arguments = parser.parse_args()
    if arguments.rounds <= 0 or not arguments.round_time > 0 or not arguments.budget > 0:
        parser.error("--rounds, --round-time and --budget must be positive")
    with open(arguments.file, "rb") as file:
        data = file.read()
    fmt = plistlib.FMT_BINARY if arguments.format == "binary" else plistlib.FMT_XML
    value = plistlib.loads(data, fmt=fmt)
    values = count_values(value)
    if arguments.operation == "decode":
        def call():
            plistlib.loads(data, fmt=fmt)
    else:
        def call():
            plistlib.dumps(value, fmt=fmt, sort_keys=False)
    if arguments.calls is not None:
        for _ in range(arguments.calls):
            call()
        print(f"0 {values}")
        return 0
    best = best_seconds_per_call(call, arguments.rounds, arguments.round_time, arguments.budget)
    print(f"{best:.9g} {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
