"""W14's two as-of joins (1M trades x 100K quotes, 100 symbols; the benchmark's own queries and
settings), each run's wall time and its stages' executor CPU, from Spark's status store; and
the keyed one over every 100th quote only (1,000 quotes, 10 a symbol): the same trades, the same
plan, a buffer that fits the cache, so the difference is what the search's cache misses cost.
With `--stock`, stock Spark's plan of the keyed one (`SortMergeAsOfJoin`, ~15-30 s on this
machine) once, its answer checked against rangejoin's. Executor CPU moves less than wall time
with the machine's load, so a change to the join's per-row work (the search) shows in it first:
compare two jars by running this once with each installed, alternately. Reads the benchmark's
scale-1 data (run `make bench` first); medians over the runs after the first two.

    .venv/bin/python -m bench.probes.asof_cpu [--runs 9] [--stock]
"""

import argparse
import os
import statistics
import time

from bench import workloads as wl
from bench.jvm_metrics import QueryStages
from bench.local_spark import SPARK_CONF, local_spark, register_parquet

W14 = next(w for w in wl.workloads() if w.key == "W14")
KEYED, NO_KEY = W14.queries
# The keyed query over a view of every 100th quote: its symbols' quotes are 10 each.
SPARSE = wl.Query("W14 ASOF JOIN, every 100th quote", KEYED.sql.replace("JOIN qu q", "JOIN qu_sparse q"),
                  streamed=KEYED.streamed, spark_conf=KEYED.spark_conf)
# Otherwise the control would silently run the keyed query again.
assert SPARSE.sql != KEYED.sql, f"W14's keyed query no longer reads 'JOIN qu q': {KEYED.sql}"


def timed(spark, stages: QueryStages, query: wl.Query, extra: dict | None = None) -> tuple:
    """One run of ``query`` under its settings (and ``extra``): (wall s, executor CPU ms, answer)."""
    conf = {**query.spark_conf, **(extra or {})}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        stages.mark()
        start = time.perf_counter()
        answer = tuple(spark.sql(query.sql).collect()[0])
        wall = time.perf_counter() - start
        return wall, sum(s.executorCpuTime() for s in stages.completed()) // 1_000_000, answer
    finally:
        for key in conf:
            spark.conf.unset(key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--stock", action="store_true", help="stock Spark's keyed join once, beside")
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    with local_spark("asof-cpu", conf=SPARK_CONF) as spark:
        register_parquet(spark, args.data_dir, W14.tables)
        spark.sql("SELECT * FROM qu WHERE id % 100 = 0").createOrReplaceTempView("qu_sparse")
        stages = QueryStages(spark)
        runs, answers = {}, {}
        for run in range(args.runs):
            for query in (KEYED, NO_KEY, SPARSE):
                wall, cpu, answers[query.key] = timed(spark, stages, query)
                runs.setdefault(query.key, []).append((wall, cpu))
                print(f"run {run:2d} {query.key:<42} {wall:6.3f} s  executor CPU {cpu:5d} ms  "
                      f"answer {answers[query.key]}", flush=True)
        for key, results in runs.items():
            kept = results[2:] or results
            print(f"{key}, rangejoin: wall median {statistics.median(w for w, _ in kept):.3f} s "
                  f"(best {min(w for w, _ in kept):.3f}), executor CPU median "
                  f"{statistics.median(c for _, c in kept):.0f} ms")
        if args.stock:
            wall, cpu, answer = timed(spark, stages, KEYED, {"spark.rangejoin.enabled": "false"})
            if answer != answers[KEYED.key]:
                raise SystemExit(f"stock Spark answered {answer}, rangejoin {answers[KEYED.key]}")
            print(f"{KEYED.key}, stock Spark (one run): wall {wall:.3f} s, executor CPU {cpu} ms, "
                  f"answer {answer} (rangejoin's)")


if __name__ == "__main__":
    main()
