"""W3's buffered side (b3, 1M rows) and what broadcasting it costs: rangejoin's W3 beside its floor
and beside stock Spark's own broadcast hash join of the same side (`s3 JOIN b3 ON s.k = b.k`,
hinted), in one JVM, the three interleaved; and SortedBroadcast's metrics (medians) for
rangejoin, whose answer is checked against DuckDB's on the same files. The side switch is off
here, so that b3 is the side broadcast: with it on, W3 buffers s3's few rows that can match
instead (bench.probes.side_switch measures that). The numbers behind docs/design.md's "Where the
sort runs". Reads the benchmark's scale-1 data (run `make bench`, or `python -m bench.bench --only
W3`, first).

    .venv/bin/python -m bench.probes.w3_build [--rounds 4] [--runs 3]

With `--only-rangejoin N` it runs rangejoin's W3 N times and nothing else: the loop design.md's
profiles were recorded over, e.g. with
`JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=w3.jfr,settings=profile"`.
"""

import argparse
import os
import time

import duckdb

from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark

QUERIES = {
    "rangejoin W3": "SELECT count(*) AS n, sum(s.id) AS sids, sum(b.id) AS bids FROM s3 s JOIN b3 b ON s.k > b.k",
    "floor": "SELECT count(*) AS n, sum(id) AS ids FROM (SELECT id FROM s3 WHERE k % 2 = 0 "
             "UNION ALL SELECT id FROM b3 WHERE k % 2 = 0)",
    "stock BHJ of b3": "SELECT /*+ BROADCAST(b) */ count(*) AS n, sum(s.id) AS sids, sum(b.id) AS bids "
                       "FROM s3 s JOIN b3 b ON s.k = b.k",
}
METRICS = ["collectTime", "sortTime", "broadcastTime"]


def node(plan, name):
    """The first node called `name` in an executed plan, through adaptive and query-stage nodes."""
    if plan.nodeName() == name:
        return plan
    if plan.nodeName() == "AdaptiveSparkPlan":
        children = [plan.executedPlan()]
    elif "QueryStage" in plan.nodeName():
        children = [plan.plan()]
    else:
        it = plan.children().iterator()
        children = []
        while it.hasNext():
            children.append(it.next())
    for child in children:
        found = node(child, name)
        if found is not None:
            return found
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of the three queries (the first warms up)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query per round")
    parser.add_argument("--only-rangejoin", type=int, default=0, metavar="N",
                        help="run rangejoin's W3 N times, nothing else, and print each time")
    args = parser.parse_args()
    data = wl.full_size_data()
    with local_spark("w3-build", conf=dict(SPARK_CONF, **{"spark.rangejoin.sideSwitch.enabled": "false"})) as spark:
        for t in ("s3", "b3"):
            spark.read.parquet(os.path.join(data, f"{t}.parquet")).createOrReplaceTempView(t)
        if args.only_rangejoin:
            times = []
            for _ in range(args.only_rangejoin):
                start = time.perf_counter()
                spark.sql(QUERIES["rangejoin W3"]).collect()
                times.append(time.perf_counter() - start)
            print(" ".join(f"{t:.3f}" for t in times))
            return
        # Stock Spark cannot run W3 itself at full size (a nested loop of 10^13 pairs): DuckDB, on the
        # same files, checks rangejoin's answer.
        con = duckdb.connect()
        for t in ("s3", "b3"):
            con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{os.path.join(data, t + '.parquet')}')")
        expected = tuple(con.execute(QUERIES["rangejoin W3"]).fetchone())
        times = {name: [] for name in QUERIES}
        metrics = {m: [] for m in METRICS}
        for round_ in range(args.rounds):
            for name, query in QUERIES.items():
                for _ in range(args.runs):
                    start = time.perf_counter()
                    df = spark.sql(query)
                    answer = tuple(df.collect()[0])
                    seconds = time.perf_counter() - start
                    if name == "rangejoin W3" and answer != expected:
                        raise SystemExit(f"W3: rangejoin answered {answer}, DuckDB {expected}")
                    if round_ == 0:
                        continue
                    times[name].append(seconds)
                    if name == "rangejoin W3":
                        values = node(df._jdf.queryExecution().executedPlan(), "SortedBroadcast").metrics()
                        for m in METRICS:
                            metrics[m].append(values.get(m).get().value())
        median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        for name, ts in times.items():
            print(f"{name:<18} best {min(ts):.3f} s  median {median(ts):.3f} s  ({len(ts)} runs)")
        print("rangejoin's SortedBroadcast (medians): " +
              ", ".join(f"{m} {median(v)} ms" for m, v in metrics.items()))


if __name__ == "__main__":
    main()
