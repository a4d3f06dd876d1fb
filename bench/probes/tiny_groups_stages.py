"""W10's tiny key groups, stage by stage: rangejoin's per-key index against stock Spark's
BroadcastHashJoin, from each query's own SQL metrics rather than its wall time. A query this
short moves from run to run by more than the two joins differ (docs/design.md, "Equality keys
plus a range"); the metrics split it into the broadcast (collect, sort or build, broadcast) and the probe stage
(the tasks' WholeStageCodegen duration, summed over tasks), where the two joins' own work is.
Reads the benchmark's scale-1 data (run `make bench` first); the engines alternate, a warm-up
round first; medians and minima over the runs.

    .venv/bin/python -m bench.probes.tiny_groups_stages [--rounds 30]
"""

import argparse
import os
import re
import statistics
import time

from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark, register_parquet
from bench.probes.tiny_groups_after_others import TINY

ENGINES = {"true": "rangejoin", "false": "stock"}


def stage_times(spark) -> dict:
    """The last SQL execution's broadcast timings and probe-stage duration, in ms."""
    store = spark._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    last = executions.apply(executions.size() - 1)
    names = {}
    nodes = store.planGraph(last.executionId()).allNodes()
    for i in range(nodes.size()):
        node = nodes.apply(i)
        metrics = node.metrics()
        for j in range(metrics.size()):
            m = metrics.apply(j)
            names[m.accumulatorId()] = (node.name(), m.name())
    times = {}
    values = store.executionMetrics(last.executionId()).iterator()
    while values.hasNext():
        kv = values.next()
        node, metric = names.get(kv._1(), ("", ""))
        # A task metric reads "total (min, med, max ...)\n40 ms (...)": its first number is the total.
        value = int(re.findall(r"\d+", kv._2())[0]) if re.search(r"\d", kv._2()) else 0
        if "Broadcast" in node and metric.startswith("time to"):
            times[metric.replace("time to ", "broadcast: ")] = value
        elif node.startswith("WholeStageCodegen") and "total" in kv._2():
            times["probe stage (tasks' sum)"] = value
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="timed runs per engine")
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    with local_spark("tiny-groups-stages", conf=SPARK_CONF) as spark:
        register_parquet(spark, args.data_dir, ("cp", "ci"))
        samples = {engine: {} for engine in ENGINES}
        answers = {}
        for round_ in range(args.rounds + 2):  # two warm-up rounds
            for enabled in ENGINES:
                spark.conf.set("spark.rangejoin.enabled", enabled)
                start = time.perf_counter()
                answers[enabled] = tuple(spark.sql(TINY).collect()[0])
                wall = (time.perf_counter() - start) * 1000
                if round_ < 2:
                    continue
                for name, value in dict(stage_times(spark), **{"wall": wall}).items():
                    samples[enabled].setdefault(name, []).append(value)
        if answers["true"] != answers["false"]:
            raise SystemExit(f"answers differ: {answers}")
        print(f"W10 keyed tiny groups, {args.rounds} runs per engine: median (min), ms")
        for enabled, engine in ENGINES.items():
            for name, values in sorted(samples[enabled].items()):
                print(f"  {engine:>9}  {name:<28} {statistics.median(values):8.1f} ({min(values):.1f})")
        stock, rj = samples["false"], samples["true"]
        for name in ("probe stage (tasks' sum)", "wall"):
            print(f"stock / rangejoin, {name}: median {statistics.median(stock[name]) / statistics.median(rj[name]):.2f}x")


if __name__ == "__main__":
    main()
