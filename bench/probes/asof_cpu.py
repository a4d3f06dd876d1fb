"""W14's two as-of joins (1M trades x 100K quotes, 100 symbols), each run's wall time and its
stages' executor CPU, from Spark's status store; and stock Spark's plan of the keyed one once
(`SortMergeAsOfJoin`, ~15-30 s on this machine) with `--stock`. Executor CPU moves less than wall
time with the machine's load, so a change to the join's per-row work (the search) shows in it
first: compare two jars by running this once with each installed, alternately. Reads the
benchmark's scale-1 data (run `make bench` first); medians over the runs after the first two.

    .venv/bin/python -m bench.probes.asof_cpu [--runs 9] [--stock]
"""

import argparse
import os
import statistics
import time

from bench import workloads as wl
from bench.jvm_metrics import QueryStages
from bench.local_spark import SPARK_CONF, local_spark

KEYED = ("SELECT count(q.bid) AS n, sum(q.bid) AS bids FROM tr t LEFT ASOF JOIN qu q "
         "MATCH_CONDITION (t.ts >= q.ts) ON t.sym = q.sym")
NO_KEY = ("SELECT count(q.bid) AS n, sum(q.bid) AS bids FROM tr t LEFT ASOF JOIN qu q "
          "MATCH_CONDITION (t.ts >= q.ts)")
QUERIES = {"keyed, broadcast": (KEYED, {}), "no key, nothing broadcast": (NO_KEY, wl.NO_BROADCAST)}


def timed(spark, stages: QueryStages, sql: str, conf: dict) -> tuple:
    """One run: (wall seconds, executor CPU ms of its stages, answer)."""
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        stages.mark()
        start = time.perf_counter()
        answer = tuple(spark.sql(sql).collect()[0])
        wall = time.perf_counter() - start
        cpu = sum(s.executorCpuTime() for s in stages.stages() if str(s.status()) == "COMPLETE") // 1_000_000
        return wall, cpu, answer
    finally:
        for key in conf:
            spark.conf.unset(key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--stock", action="store_true", help="stock Spark's keyed join once, beside")
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    conf = dict(SPARK_CONF, **{"spark.sql.join.asofJoin.enabled": "true"})
    with local_spark("asof-cpu", conf=conf) as spark:
        for table in ("tr", "qu"):
            spark.read.parquet(os.path.join(args.data_dir, f"{table}.parquet")).createOrReplaceTempView(table)
        stages = QueryStages(spark)
        runs = {name: [] for name in QUERIES}
        for run in range(args.runs):
            for name, (sql, query_conf) in QUERIES.items():
                wall, cpu, answer = timed(spark, stages, sql, query_conf)
                runs[name].append((wall, cpu))
                print(f"run {run:2d} {name:<27} {wall:6.3f} s  executor CPU {cpu:5d} ms  answer {answer}", flush=True)
        for name, results in runs.items():
            kept = results[2:] or results
            print(f"W14 {name}, rangejoin: wall median {statistics.median(w for w, _ in kept):.3f} s "
                  f"(best {min(w for w, _ in kept):.3f}), executor CPU median "
                  f"{statistics.median(c for _, c in kept):.0f} ms")
        if args.stock:
            wall, cpu, answer = timed(spark, stages, KEYED, {"spark.rangejoin.enabled": "false"})
            print(f"W14 keyed, broadcast, stock Spark (one run): wall {wall:.3f} s, executor CPU {cpu} ms, "
                  f"answer {answer}")


if __name__ == "__main__":
    main()
