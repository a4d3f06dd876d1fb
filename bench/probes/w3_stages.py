"""W3 (`s3 JOIN b3 ON s.k > b.k`, 10M x 1M, the side switch on) and its floor, stage by stage:
each run's wall time and executor CPU, medians over the runs after the first two, and the last
run's timeline of completed stages (offsets from the query's start, CPU, tasks, rows read from
files), from Spark's status store. The timeline shows the side switch's pass over b3's key, the
scan of s3 that builds the broadcast, the join's stage and the gaps between them. Compare two
jars by installing each in turn and running this once with each, alternately. Reads the
benchmark's scale-1 data (run `make bench`, or `python -m bench.bench --only W3`, first).

    .venv/bin/python -m bench.probes.w3_stages [--runs 10]
"""

import argparse
import os
import statistics
import time

from bench import workloads as wl
from bench.jvm_metrics import QueryStages, print_timeline
from bench.local_spark import SPARK_CONF, local_spark, register_parquet
from bench.probes.w3_build import QUERIES

W3 = QUERIES["rangejoin W3"]
FLOOR = QUERIES["floor"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    with local_spark("w3-stages", conf=SPARK_CONF) as spark:
        register_parquet(spark, args.data_dir, ("s3", "b3"))
        stages = QueryStages(spark)
        walls = {"W3": [], "floor": []}
        cpus = {"W3": [], "floor": []}
        for run in range(args.runs):
            for name, sql in (("W3", W3), ("floor", FLOOR)):
                stages.mark()
                start = time.perf_counter()
                answer = tuple(spark.sql(sql).collect()[0])
                wall = (time.perf_counter() - start) * 1000
                done = stages.completed()
                cpu = sum(s.executorCpuTime() for s in done) // 1_000_000
                print(f"run {run:2d} {name}: {wall:5.0f} ms, executor CPU {cpu} ms, answer {answer}", flush=True)
                if run >= 2 or args.runs <= 2:
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                if run == args.runs - 1:
                    print_timeline(done, wall)
        for name in walls:
            print(f"{name}: wall median {statistics.median(walls[name]):.0f} ms (best {min(walls[name]):.0f}), "
                  f"executor CPU median {statistics.median(cpus[name]):.0f} ms")


if __name__ == "__main__":
    main()
