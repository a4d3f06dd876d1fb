"""W12's joins at 2M x 200K on `local-cluster[2,1,1024]`: two executor JVMs whose memory for
execution and storage (`spark.testing.memory`, 8 MB: about 4.8 MB usable, as the binned
distributed suite sets it) is smaller than either side as Spark holds it (the points 48 MB, the
intervals 6 MB as rows, 10 MB once copied to bins):
how the binned join fares when no executor can hold a side, with rangejoin's shuffled per-key
index (each task sorts its partition of the interval copies, 4 MB at 4 partitions) and with
Spark's own sort-merge join over the same bins (`spark.rangejoin.shuffle.maxPartitionSize=-1`,
which spills). Stock Spark's plan is a cartesian product (4 x 10^11 pairs) and is not run. Best
of 3 after a warm-up, the answers checked equal.

    .venv/bin/python -m bench.probes.local_cluster [--data-dir bench/data/scale-1-v1]
"""

import argparse
import os
import time

import pyspark
from pyspark.sql import SparkSession

import rangejoin
from bench import workloads as wl
from bench.local_spark import register_parquet

QUERIES = {
    "W12 BETWEEN large": "SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM p_large p JOIN i_large i "
                         "ON p.x BETWEEN i.lo AND i.hi",
    "W12 overlap large": "SELECT count(*) AS n, sum(a.id + i.id) AS ids FROM a_large a JOIN i_large i "
                         "ON a.lo < i.hi AND i.lo < a.hi",
}
PLANS = {"rangejoin (shuffled index)": "64m", "rangejoin (Spark's sort-merge join on bins)": "-1"}


def executors_started(spark) -> int:
    """How many executors the cluster has started: a lost one is replaced under a new id."""
    infos = spark.sparkContext._jsc.sc().getExecutorIds()
    return max((int(infos.apply(i)) for i in range(infos.size())), default=-1) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    builder = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("local-cluster")
               .config("spark.executor.memory", "512m")
               # Spark's memory manager sizes itself from these (spark.testing lifts the driver's
               # minimum), as Spark's own tests of spilling do.
               .config("spark.testing", "true")
               .config("spark.testing.memory", str(8 << 20))
               # In testing mode, executors start from the Spark home of the test run: pyspark's.
               .config("spark.driver.extraJavaOptions", f"-Dspark.test.home={os.path.dirname(pyspark.__file__)}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.autoBroadcastJoinThreshold", "-1")
               .config(rangejoin.BROADCAST_THRESHOLD, "-1"))
    spark = rangejoin.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        register_parquet(spark, args.data_dir, ("p_large", "i_large", "a_large"))
        memories = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
        print(f"local-cluster[2,1,1024]: {memories.size()} block managers (driver and executors), "
              "spark.testing.memory 8 MB each")
        for name, query in QUERIES.items():
            answers = {}
            for plan, size in PLANS.items():
                spark.conf.set(rangejoin.SHUFFLE_MAX_PARTITION_SIZE, size)
                times = []
                for run in range(args.repeat + 1):
                    start = time.perf_counter()
                    answers[plan] = tuple(spark.sql(query).collect()[0])
                    if run > 0:
                        times.append(time.perf_counter() - start)
                lost = executors_started(spark) - 2
                print(f"{name:<20} {plan:<45} best {min(times):6.2f} s  (runs: "
                      f"{', '.join(f'{t:.2f}' for t in times)})  answer {answers[plan]}; "
                      f"executors lost and replaced so far: {lost}")
            if len(set(answers.values())) != 1:
                raise SystemExit(f"{name}: answers differ: {answers}")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
