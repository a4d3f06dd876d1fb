"""Keyed EXISTS, IN and NOT IN with one inequality, stock Spark against rangejoin (the numbers
docs/design.md quotes under "Keyed semi, anti and existence joins"): 600K points and 60K
intervals as cached views, 24 keys or unique keys, best of 3 after a warm-up, local[2].

    .venv/bin/python -m bench.probes.keyed_subqueries
"""

import time

from bench.local_spark import SPARK_CONF, local_spark

QUERIES = [
    ("EXISTS, unique keys",
     "SELECT count(*) FROM pp p WHERE EXISTS (SELECT 1 FROM ii i WHERE i.pid = p.id AND i.lo > p.x)"),
    ("IN, unique values", "SELECT count(*) FROM pp p WHERE p.id IN (SELECT i.pid FROM ii i WHERE i.lo > p.x)"),
    ("NOT IN, unique values",
     "SELECT count(*) FROM pp p WHERE p.id NOT IN (SELECT i.pid FROM ii i WHERE i.lo > p.x)"),
    ("NOT IN, 24 values", "SELECT count(*) FROM pp p WHERE p.c NOT IN (SELECT i.c FROM ii i WHERE i.lo > 2 * p.x)"),
    ("IN, 24 values", "SELECT count(*) FROM pp p WHERE p.c IN (SELECT i.c FROM ii i WHERE i.lo > 2 * p.x)"),
]


def main() -> None:
    with local_spark("keyed-subqueries", conf=SPARK_CONF) as spark:
        spark.sql("CREATE OR REPLACE TEMP VIEW pp AS "
                  "SELECT id, id % 24 AS c, (id * 7919) % 1000000 AS x FROM range(600000)")
        spark.sql("CREATE OR REPLACE TEMP VIEW ii AS "
                  "SELECT id, id * 10 AS pid, id % 24 AS c, (id * 104729) % 1000000 AS lo FROM range(60000)")
        spark.sql("CACHE TABLE pp")
        spark.sql("CACHE TABLE ii")
        for name, query in QUERIES:
            answers = {}
            for enabled in ("false", "true"):
                spark.conf.set("spark.rangejoin.enabled", enabled)
                best = float("inf")
                for _ in range(4):
                    start = time.perf_counter()
                    answers[enabled] = spark.sql(query).collect()[0][0]
                    best = min(best, time.perf_counter() - start)
                label = "rangejoin" if enabled == "true" else "stock Spark"
                print(f"{name:24s} {label:12s} {best:8.3f} s  count {answers[enabled]}", flush=True)
            if answers["false"] != answers["true"]:
                raise SystemExit(f"{name}: answers differ: {answers}")


if __name__ == "__main__":
    main()
