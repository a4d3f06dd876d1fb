"""W14's as-of join without a key (1M trades x 100K quotes, nothing broadcast: the time-ranged
placement), or with `--keyed` the keyed one, stage by stage: each run's wall time, executor CPU
and the CPU of the join stage (the one reading the shuffled rows), medians over the runs after
the first two; and the last run's timeline of completed stages (offsets from the query's start,
tasks, rows read from files, written to and read from shuffles), from Spark's status store. The
timeline shows what runs before the join: the sample's job, the map stages, the gaps between.
Compare two jars by installing each in turn and running this once with each, alternately: the
machine's speed moves between runs by more than most changes. Reads the benchmark's scale-1
data (run `make bench` first).

    .venv/bin/python -m bench.probes.asof_stages [--keyed] [--runs 12]
"""

import argparse
import os
import statistics

from bench import workloads as wl
from bench.jvm_metrics import QueryStages, print_timeline
from bench.local_spark import SPARK_CONF, local_spark, register_parquet
from bench.probes.asof_cpu import KEYED, NO_KEY, W14, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keyed", action="store_true", help="the keyed query, not the one without a key")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    query = KEYED if args.keyed else NO_KEY
    with local_spark("asof-stages", conf=SPARK_CONF) as spark:
        register_parquet(spark, args.data_dir, W14.tables)
        stages = QueryStages(spark)
        walls, cpus, joins = [], [], []
        for run in range(args.runs):
            wall_s, cpu, answer = timed(spark, stages, query)
            wall = wall_s * 1000
            done = stages.completed()
            # Bytes, not records: the time-ranged placement shuffles its rows in chunks of many.
            join = sum(s.executorCpuTime() for s in done if s.shuffleReadBytes() > 1_000_000) // 1_000_000
            print(f"run {run:2d} {query.key}: {wall:5.0f} ms, executor CPU {cpu} ms (join stage {join}), "
                  f"answer {answer}", flush=True)
            if run >= 2 or args.runs <= 2:
                walls.append(wall)
                cpus.append(cpu)
                joins.append(join)
        print("last run's stages (offsets from the query's start, ms):")
        print_timeline(done, wall)
        print(f"{query.key}, rangejoin: wall median {statistics.median(walls):.0f} ms (best {min(walls):.0f}), "
              f"executor CPU median {statistics.median(cpus):.0f} ms, join stage {statistics.median(joins):.0f} ms")


if __name__ == "__main__":
    main()
