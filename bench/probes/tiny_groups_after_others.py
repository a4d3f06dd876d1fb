"""W10's tiny key groups, rangejoin against stock Spark, in a fresh JVM and again after the other
W1-W10 queries have run in it: whether the JIT, having seen every index's finder, runs the per-key
index slower (profile pollution at shared call sites), as some runs of the full benchmark
suggested. The numbers behind docs/design.md's "Equality keys plus a range". Reads the
benchmark's scale-1 data (run `make bench` first); each engine runs the query in turn, best of
the runs.

    .venv/bin/python -m bench.probes.tiny_groups_after_others [--rounds 4] [--runs 4]
"""

import argparse
import os
import time

from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark

TINY = ("SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM cp p JOIN ci i "
        "ON p.u = i.u AND p.x BETWEEN i.lo AND i.hi")
# One query per finder: sorted run with a residual, existence, semi with a residual, output-heavy
# outer, band, overlap (interval tree), left band, timestamps, per key.
OTHERS = [
    "SELECT count(*) AS n FROM t1 JOIN t2 ON t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 2 = 0",
    "SELECT count(*) AS n, sum(o.id) AS ids FROM o WHERE EXISTS (SELECT 1 FROM s WHERE s.k > o.k)",
    "SELECT count(*) AS n, sum(o.id) AS ids FROM o LEFT SEMI JOIN s ON s.k > o.k AND (s.k + o.k) % 3 = 0",
    "SELECT count(*) AS n, count(b.id) AS m, sum(b.id) AS bids FROM s4 s LEFT JOIN b4 b ON s.k > b.k",
    "SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM p JOIN i ON p.x BETWEEN i.lo AND i.hi",
    "SELECT count(*) AS n, sum(a.id + i.id) AS ids FROM a JOIN i ON a.lo < i.hi AND i.lo < a.hi",
    "SELECT count(*) AS n, count(i.id) AS m, sum(p.id + coalesce(i.id, 0)) AS ids "
    "FROM p LEFT JOIN i ON p.x >= i.lo AND p.x < i.hi",
    "SELECT count(*) AS n, sum(e.id + w.id) AS ids FROM e JOIN w ON e.ts >= w.s AND e.ts < w.e",
    "SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM cp p JOIN ci i "
    "ON p.chr = i.chr AND p.x BETWEEN i.lo AND i.hi",
]
TABLES = ["cp", "ci", "t1", "t2", "o", "s", "s4", "b4", "p", "i", "a", "e", "w"]


def best_of(spark, enabled: str, runs: int):
    spark.conf.set("spark.rangejoin.enabled", enabled)
    best, answer = None, None
    for _ in range(runs):
        start = time.perf_counter()
        answer = spark.sql(TINY).collect()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best, answer


def compare(spark, label: str, rounds: int, runs: int) -> None:
    rj, stock = [], []
    for _ in range(rounds):
        t, a = best_of(spark, "true", runs)
        rj.append(t)
        t, b = best_of(spark, "false", runs)
        stock.append(t)
        if a != b:
            raise SystemExit(f"answers differ: rangejoin {a}, stock Spark {b}")
    print(f"{label:<32} stock {min(stock):.3f} s  rangejoin {min(rj):.3f} s  "
          f"stock/rangejoin {min(stock) / min(rj):.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of both engines")
    parser.add_argument("--runs", type=int, default=4, help="timed runs per engine per round")
    args = parser.parse_args()
    data = wl.full_size_data()
    with local_spark("tiny-groups-after-others", conf=SPARK_CONF) as spark:
        for t in TABLES:
            spark.read.parquet(os.path.join(data, f"{t}.parquet")).createOrReplaceTempView(t)
        best_of(spark, "true", 1)  # warm-up
        best_of(spark, "false", 1)
        compare(spark, "fresh JVM:", args.rounds, args.runs)
        spark.conf.set("spark.rangejoin.enabled", "true")
        for query in OTHERS:
            for _ in range(3):
                spark.sql(query).collect()
        compare(spark, "after the other W1-W10 queries:", args.rounds, args.runs)


if __name__ == "__main__":
    main()
