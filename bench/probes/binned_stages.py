"""W12's binned joins (2M x 200K, nothing broadcast) stage by stage, beside stock Spark's shuffled
hash join of the same two sides on an equality (the cheapest join Spark's shuffle runs over these
rows; stock's own plan for W12 is a cartesian product, ~20,000 s). Each run: the wall time and the
executor CPU time of the stages, from Spark's status store, grouped by what a stage reads: the
large side's map stage (Parquet scan, bin keys, shuffle write; for overlap also the grid
subquery's scan of that side), the small side's, and the join stage (shuffle read, each task's
index over its bins or hash table, the probes). A change to one stage is best read against
another stage of the same run: on a shared 2-core machine a whole run's speed moves by more than
one stage's change, the ratio of two stages of one run much less. Reads the benchmark's scale-1
data (run `make bench` first); the two queries alternate; medians over the runs after the first two.

    .venv/bin/python -m bench.probes.binned_stages [--query between|overlap] [--runs 10]
"""

import argparse
import os
import statistics
import time

from bench import workloads as wl
from bench.jvm_metrics import QueryStages
from bench.local_spark import SPARK_CONF, local_spark, register_parquet

QUERIES = {
    "between": "SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM p_large p JOIN i_large i "
               "ON p.x BETWEEN i.lo AND i.hi",
    "overlap": "SELECT count(*) AS n, sum(a.id + i.id) AS ids FROM a_large a JOIN i_large i "
               "ON a.lo < i.hi AND i.lo < a.hi",
}
# Stock Spark's shuffled hash join of the same sides and columns, on an equality of their keys.
REFERENCES = {
    "between": "SELECT /*+ SHUFFLE_HASH(i) */ count(*) AS n, sum(p.id + i.id) AS ids "
               "FROM p_large p JOIN i_large i ON p.x = i.lo",
    "overlap": "SELECT /*+ SHUFFLE_HASH(i) */ count(*) AS n, sum(a.id + i.id) AS ids "
               "FROM a_large a JOIN i_large i ON a.lo = i.lo AND a.hi = i.hi",
}
STAGES = ("large map", "small map", "join", "other")


def kind(stage) -> str:
    """Which of STAGES a completed stage is, by the rows it reads and the bytes it shuffles
    (bytes, not records: rangejoin's binned joins shuffle chunks of many rows each)."""
    if stage.shuffleReadBytes() > 1_000_000:
        return "join"
    if stage.inputRecords() >= 1_000_000:
        return "large map"
    if stage.shuffleWriteBytes() > 1_000_000:
        return "small map"
    return "other"


def stage_cpu(stages) -> dict:
    """Executor CPU ms per kind of stage, over completed `stages`."""
    cpu = dict.fromkeys(STAGES, 0)
    for stage in stages:
        cpu[kind(stage)] += stage.executorCpuTime() // 1_000_000
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--query", choices=sorted(QUERIES), default="between")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    conf = dict(SPARK_CONF)
    conf.update(wl.NO_BROADCAST)
    with local_spark("binned-stages", conf=conf) as spark:
        register_parquet(spark, args.data_dir, ("p_large", "i_large", "a_large"))
        query_stages = QueryStages(spark)
        engines = {"rangejoin": ("true", QUERIES[args.query]), "stock shuffled hash join": ("false", REFERENCES[args.query])}
        runs = {name: [] for name in engines}
        for run in range(args.runs):
            for name, (enabled, query) in engines.items():
                spark.conf.set("spark.rangejoin.enabled", enabled)
                query_stages.mark()
                start = time.perf_counter()
                answer = tuple(spark.sql(query).collect()[0])
                wall = time.perf_counter() - start
                cpu = stage_cpu(query_stages.completed())
                runs[name].append((wall, cpu))
                print(f"run {run:2d} {name:<25} {wall:6.3f} s  " + "  ".join(f"{k} {cpu[k]:5d} ms" for k in STAGES)
                      + f"  answer {answer}", flush=True)
        for name, results in runs.items():
            kept = results[2:] or results
            median = {k: statistics.median(c[k] for _, c in kept) for k in STAGES}
            ratio = statistics.median(c["join"] / max(1, c["large map"]) for _, c in kept)
            print(f"W12 {args.query}, {name}: wall best {min(w for w, _ in kept):.3f} s, median "
                  f"{statistics.median(w for w, _ in kept):.3f} s; CPU medians "
                  + ", ".join(f"{k} {median[k]:.0f} ms" for k in STAGES)
                  + f"; join / large map {ratio:.2f}")


if __name__ == "__main__":
    main()
