"""What installing rangejoin costs a query's planning: the time to build the executed plan
(`queryExecution.executedPlan`, nothing run) with `spark.rangejoin.enabled` on and off,
alternated in one JVM, medians after a warm-up. Queries rangejoin leaves to Spark (a scan, a
union, an equi-join) must cost the same either way; W3 and W14's keyless as-of join show what
planning rangejoin's own plans costs. Reads the benchmark's scale-1 data (run `make bench`, or
`python -m bench.bench --only W3` and `--only W14`, first).

    .venv/bin/python -m bench.probes.planning_cost [--rounds 40]
"""

import argparse
import os
import statistics
import time

from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark, register_parquet

QUERIES = {
    "scan": "SELECT count(*) FROM s3 WHERE k % 2 = 0",
    "union (W3's floor)": "SELECT count(*) AS n, sum(id) AS ids FROM (SELECT id FROM s3 WHERE k % 2 = 0 "
                          "UNION ALL SELECT id FROM b3 WHERE k % 2 = 0)",
    "equi-join": "SELECT count(*) FROM s3 s JOIN b3 b ON s.k = b.k",
    "W3 (the side switch)": "SELECT count(*) AS n, sum(s.id) AS sids, sum(b.id) AS bids FROM s3 s JOIN b3 b ON s.k > b.k",
    "W14, no key": "SELECT count(q.bid) AS n, sum(q.bid) AS bids FROM tr t LEFT ASOF JOIN qu q "
                   "MATCH_CONDITION (t.ts >= q.ts)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds (the first sixth warm up)")
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)))
    args = parser.parse_args()
    with local_spark("planning-cost", conf=SPARK_CONF) as spark:
        register_parquet(spark, args.data_dir, ("s3", "b3", "tr", "qu"))
        spark.conf.set("spark.sql.join.asofJoin.enabled", "true")
        times = {}
        for round_ in range(args.rounds):
            # Alternate which setting goes first: the second of a pair finds caches warmer.
            for enabled in (("true", "false") if round_ % 2 else ("false", "true")):
                spark.conf.set("spark.rangejoin.enabled", enabled)
                for name, sql in QUERIES.items():
                    start = time.perf_counter()
                    spark.sql(sql)._jdf.queryExecution().executedPlan()
                    if round_ >= args.rounds // 6:
                        times.setdefault((name, enabled), []).append((time.perf_counter() - start) * 1000)
        for name in QUERIES:
            on, off = (statistics.median(times[(name, e)]) for e in ("true", "false"))
            print(f"{name:22s} planning, median: rangejoin on {on:6.1f} ms, off {off:6.1f} ms")


if __name__ == "__main__":
    main()
