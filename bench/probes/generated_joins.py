"""Output-heavy joins on a small broadcast side, stock Spark against rangejoin (the held-out
shapes docs/design.md quotes under "Whole-stage code generation"): 400K x 200 rows on Parquet,
local[2], the best of the last 7 of 8 runs, two rounds each alternating the engines.

    .venv/bin/python -m bench.probes.generated_joins
"""

import tempfile
import time

from bench.local_spark import SPARK_CONF, local_spark

QUERIES = [
    ("LEFT JOIN f.k > d.k", "SELECT count(*), sum(d.id) FROM f LEFT JOIN d ON f.k > d.k"),
    ("JOIN band of 500", "SELECT count(*), sum(d.id) FROM f JOIN d ON f.k >= d.k AND f.k < d.k + 500"),
    ("JOIN f.k < d.k", "SELECT count(*), sum(d.id) FROM f JOIN d ON f.k < d.k"),
    ("NOT EXISTS, a residual",
     "SELECT count(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE f.k < d.k AND (f.id + d.id) % 3 = 0)"),
]


def main() -> None:
    with local_spark("generated-joins", conf=SPARK_CONF) as spark, tempfile.TemporaryDirectory() as tmp:
        spark.range(400000).selectExpr("id", "(id * 7919) % 100000 AS k").write.parquet(f"{tmp}/f")
        spark.range(200).selectExpr("id", "id * 500 AS k").write.parquet(f"{tmp}/d")
        spark.read.parquet(f"{tmp}/f").createOrReplaceTempView("f")
        spark.read.parquet(f"{tmp}/d").createOrReplaceTempView("d")
        for name, query in QUERIES:
            answers = {}
            for round_ in (1, 2):
                for enabled in ("false", "true"):
                    spark.conf.set("spark.rangejoin.enabled", enabled)
                    times = []
                    for _ in range(8):
                        start = time.perf_counter()
                        answers[enabled] = tuple(spark.sql(query).collect()[0])
                        times.append(time.perf_counter() - start)
                    label = "rangejoin" if enabled == "true" else "stock Spark"
                    print(f"{name:24s} round {round_} {label:12s} {min(times[1:]):8.3f} s  {answers[enabled]}",
                          flush=True)
            if answers["false"] != answers["true"]:
                raise SystemExit(f"{name}: answers differ: {answers}")


if __name__ == "__main__":
    main()
