#!/usr/bin/env python3
"""The Python half of scripts/spark-integration.sh.

  spark_integration.py spark WORK RECORDS WRAPPER PARTITIONS
      Runs RECORDS through `rdd.pipe("WRAPPER WORK/rss-spark")` on Spark local[2] into
      WORK/spark-out, reads the results back with spark.read.json (schema and a query into
      WORK/schema.txt, WORK/query.txt), then again on local[2,4] (task retries allowed) into
      WORK/spark-retry-out, through `WRAPPER WORK/rss-retry WORK/fail-once`: the wrapper makes the
      first process to take that marker exit 3 after writing all of its results. Figures into
      WORK/spark.json.
  spark_integration.py compare REFERENCE NAME=FILE_OR_DIR...
      Compares each result set with REFERENCE record for record: parsed as JSON, `line` and
      `input` dropped, keyed by `id` (results with a null id, the lines that are not JSON, as a
      multiset), and in order. A directory stands for its part-* files in name order. Exits 1 on
      any difference, naming the first ones.
  spark_integration.py selftest REFERENCE WORK
      Shows that compare fails: a prefix of REFERENCE against itself with one field changed, with
      one line left out and with one line doubled.
"""
import glob
import hashlib
import json
import os
import sys
import time
from collections import Counter
from multiprocessing import Pool


def result_files(path):
    if os.path.isdir(path):
        parts = sorted(glob.glob(os.path.join(path, "part-*")))
        if not parts:
            raise SystemExit("compare: no part files in %s" % path)
        return parts
    return [path]


def digest(path):
    """id -> digest, the digests of null-id results, the order of all digests, and the count."""
    by_id, nulls, order, dups, count = {}, Counter(), [], [], 0
    for f in result_files(path):
        with open(f, "rb") as fh:
            for raw in fh:
                r = json.loads(raw)
                r.pop("line", None)
                r.pop("input", None)
                d = hashlib.blake2b(json.dumps(r, sort_keys=True, separators=(",", ":")).encode(),
                                    digest_size=16).digest()
                count += 1
                order.append(d)
                rid = r.get("id")
                if rid is None:
                    nulls[d] += 1
                else:
                    key = json.dumps(rid)
                    if key in by_id:
                        dups.append(key)
                    by_id[key] = d
    return {"by_id": by_id, "nulls": nulls, "order": order, "dups": dups, "count": count}


def find_line(path, rid):
    for f in result_files(path):
        with open(f, "rb") as fh:
            for raw in fh:
                r = json.loads(raw)
                if json.dumps(r.get("id")) == rid:
                    return raw.decode()[:400]
    return None


def differences(ref, other):
    problems = []
    if other["count"] != ref["count"]:
        problems.append("%d results, not %d" % (other["count"], ref["count"]))
    if other["dups"]:
        problems.append("%d ids twice (first %s)" % (len(other["dups"]), other["dups"][0]))
    missing = ref["by_id"].keys() - other["by_id"].keys()
    extra = other["by_id"].keys() - ref["by_id"].keys()
    if missing:
        problems.append("%d ids missing (first %s)" % (len(missing), min(missing)))
    if extra:
        problems.append("%d ids extra (first %s)" % (len(extra), min(extra)))
    changed = sorted(k for k in ref["by_id"].keys() & other["by_id"].keys() if ref["by_id"][k] != other["by_id"][k])
    if changed:
        problems.append("%d results differ (first id %s)" % (len(changed), changed[0]))
    if other["nulls"] != ref["nulls"]:
        problems.append("the results without an id differ (%d, not %d)"
                        % (sum(other["nulls"].values()), sum(ref["nulls"].values())))
    if not problems and other["order"] != ref["order"]:
        problems.append("the same results in another order")
    return problems, changed


def compare(argv):
    ref_path, others = argv[0], [a.split("=", 1) for a in argv[1:]]
    with Pool(2) as pool:
        digests = pool.map(digest, [ref_path] + [p for _, p in others])
    ref = digests[0]
    failed = False
    for (name, path), d in zip(others, digests[1:]):
        problems, changed = differences(ref, d)
        if problems:
            failed = True
            print("compare: %s: MISMATCH: %s" % (name, "; ".join(problems)), file=sys.stderr)
            if changed:
                print("  reference: %s\n  %s: %s" % (find_line(ref_path, changed[0]), name,
                                                     find_line(path, changed[0])), file=sys.stderr)
        else:
            print("compare: %s: %d results equal the reference's, by id (%d ids, %d without one) and in order"
                  % (name, d["count"], len(d["by_id"]), sum(d["nulls"].values())))
    return 1 if failed else 0


def selftest(argv):
    ref_path, work = argv
    with open(ref_path, "rb") as fh:
        lines = [next(fh) for _ in range(3000)]
    base = os.path.join(work, "selftest-ref.ndjson")
    open(base, "wb").writelines(lines)
    # One field of one result changed (a finding's code, or ok), one result left out, one doubled.
    changed = [json.loads(l) for l in lines]
    i = next(n for n, r in enumerate(changed) if r["findings"] and r["id"] is not None)
    changed[i]["findings"][0]["code"] += "-altered"
    variants = {
        "altered": [(json.dumps(r, separators=(",", ":")) + "\n").encode() for r in changed],
        "dropped": lines[:100] + lines[101:],
        "doubled": lines[:100] + [lines[100]] + lines[100:],
        "swapped": lines[:100] + [lines[101], lines[100]] + lines[102:],
    }
    ref = digest(base)
    ok = True
    for name, content in variants.items():
        path = os.path.join(work, "selftest-%s.ndjson" % name)
        open(path, "wb").writelines(content)
        problems, _ = differences(ref, digest(path))
        if problems:
            print("compare self-test: %s result caught: %s" % (name, "; ".join(problems)))
        else:
            print("compare self-test: FAILED: a %s result was not caught" % name, file=sys.stderr)
            ok = False
    same, _ = differences(ref, digest(base))
    if same:
        print("compare self-test: FAILED: a file differs from itself", file=sys.stderr)
        ok = False
    return 0 if ok else 1


def spark(argv):
    work, records, wrapper, partitions = argv[0], argv[1], argv[2], int(argv[3])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    def session(master):
        t = time.monotonic()
        s = (SparkSession.builder.master(master).appName("resumedata-spark-integration")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.local.dir", os.path.join(work, "spark-local"))
             .config("spark.driver.extraJavaOptions",
                     "-Dlog4j.configurationFile=file:" + os.path.join(work, "log4j2.properties"))
             .getOrCreate())
        s.sparkContext.setLogLevel("ERROR")
        return s, time.monotonic() - t

    figures = {"partitions": partitions}
    uri = "file://" + os.path.abspath(records)

    # 1. local[2]: the run that is timed, then the results read back.
    s, figures["startup_s"] = session("local[2]")
    out = os.path.join(work, "spark-out")
    t = time.monotonic()
    rdd = s.sparkContext.textFile(uri, minPartitions=partitions)
    figures["partitions"] = rdd.getNumPartitions()
    rdd.pipe("%s %s/rss-spark" % (wrapper, work), checkCode=True).saveAsTextFile("file://" + out)
    figures["pipe_s"] = time.monotonic() - t

    t = time.monotonic()
    df = s.read.json("file://" + out)
    schema = df._jdf.schema().treeString()
    open(os.path.join(work, "schema.txt"), "w").write(schema)
    q = (df.select("generation", F.explode_outer("findings.code").alias("finding"))
         .groupBy("generation", "finding").count()
         .orderBy(F.desc("count"), "generation", "finding"))
    rows = q.collect()
    width = max(len(str(r["generation"])) for r in rows)
    with open(os.path.join(work, "query.txt"), "w") as fh:
        fh.write("%-*s  %-32s %8s\n" % (width, "generation", "finding", "count"))
        for r in rows:
            fh.write("%-*s  %-32s %8d\n" % (width, r["generation"], r["finding"], r["count"]))
    figures["results_read_back"] = df.count()
    figures["ok"] = df.filter("ok").count()
    figures["read_json_s"] = time.monotonic() - t
    s.stop()

    # 2. local[2,4]: up to 4 attempts a task; the wrapper makes one process fail once.
    s, _ = session("local[2,4]")
    out = os.path.join(work, "spark-retry-out")
    t = time.monotonic()
    s.sparkContext.textFile(uri, minPartitions=partitions) \
        .pipe("%s %s/rss-retry %s/fail-once" % (wrapper, work, work), checkCode=True) \
        .saveAsTextFile("file://" + out)
    figures["retry_pipe_s"] = time.monotonic() - t
    s.stop()
    json.dump(figures, open(os.path.join(work, "spark.json"), "w"))
    print("spark: %s" % json.dumps(figures))
    return 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    sys.exit({"spark": spark, "compare": compare, "selftest": selftest}[cmd](args))
