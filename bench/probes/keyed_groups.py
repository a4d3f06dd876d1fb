"""Equality key plus a range, by key group size: rangejoin's per-key index against stock Spark's
BroadcastHashJoin (which compares a streamed row with every buffered row of its key), from one
buffered row per key to thousands. The numbers behind docs/design.md's "Equality keys plus a
range": where, if anywhere, the hash join wins. 600K points and 60K intervals as cached views,
local[2]; each engine runs the query in turn, best of the runs after a warm-up round.

    .venv/bin/python -m bench.probes.keyed_groups [--rounds 4] [--runs 4]
"""

import argparse
import time

from bench.local_spark import SPARK_CONF, local_spark

POINTS = 600_000
INTERVALS = 60_000
# Buffered rows per key: 60,000 / keys.
KEYS = [60_000, 30_000, 15_000, 4_000, 600, 24]
QUERY = ("SELECT count(*) AS n, sum(p.id + i.id) AS ids FROM gp p JOIN gi i "
         "ON p.k{keys} = i.k{keys} AND p.x BETWEEN i.lo AND i.hi")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of both engines per size")
    parser.add_argument("--runs", type=int, default=4, help="timed runs per engine per round")
    args = parser.parse_args()
    span = 10 * POINTS
    key_columns = ", ".join(f"(id * 2654435761 + 3) % {k} AS k{k}" for k in KEYS)
    interval_keys = ", ".join(f"id % {k} AS k{k}" for k in KEYS)
    with local_spark("keyed-groups", conf=SPARK_CONF) as spark:
        spark.sql(f"CREATE OR REPLACE TEMP VIEW gp AS SELECT id, {key_columns}, "
                  f"(id * 2654435761 + 12345) % {span} AS x FROM range({POINTS})")
        spark.sql(f"CREATE OR REPLACE TEMP VIEW gi AS SELECT id, {interval_keys}, "
                  f"(id * 2246822519 + 777) % {span} AS lo, (id * 2246822519 + 777) % {span} + 1000 AS hi "
                  f"FROM range({INTERVALS})")
        spark.sql("CACHE TABLE gp")
        spark.sql("CACHE TABLE gi")
        print(f"{'rows per key':>12}  {'stock s':>8}  {'rangejoin s':>11}  {'stock/rj':>8}  answer", flush=True)
        for keys in KEYS:
            query = QUERY.format(keys=keys)
            best = {"false": float("inf"), "true": float("inf")}
            answers = {}
            for round_ in range(args.rounds + 1):  # round 0 warms up
                for enabled in ("true", "false"):
                    spark.conf.set("spark.rangejoin.enabled", enabled)
                    for _ in range(args.runs):
                        start = time.perf_counter()
                        answers[enabled] = tuple(spark.sql(query).collect()[0])
                        if round_ > 0:
                            best[enabled] = min(best[enabled], time.perf_counter() - start)
            if answers["false"] != answers["true"]:
                raise SystemExit(f"{keys} keys: answers differ: {answers}")
            print(f"{INTERVALS / keys:>12,.0f}  {best['false']:>8.3f}  {best['true']:>11.3f}  "
                  f"{best['false'] / best['true']:>7.2f}x  {answers['true']}", flush=True)


if __name__ == "__main__":
    main()
