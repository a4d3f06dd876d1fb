"""The side switch (docs/design.md, "The side switch") on W3's data, switched on and off in one
JVM, interleaved, beside W3's floor: W3 itself (`s3 JOIN b3 ON s.k > b.k`: 10,000 of s3's 10M rows
pass `s.k > min(b.k)`, so the switch buffers them and streams b3), and a join the switch rules
out (1M intervals from b3's keys spread over s3's whole range: nearly every row of s3 passes), to
show what ruling a side out costs. Reads the benchmark's scale-1 data (run `make bench`, or
`python -m bench.bench --only W3`, first).

    .venv/bin/python -m bench.probes.side_switch [--rounds 5]
"""

import argparse
import os
import time

from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark

QUERIES = {
    "W3": "SELECT count(*) AS n, sum(s.id) AS sids, sum(b.id) AS bids FROM s3 s JOIN b3 b ON s.k > b.k",
    "ruled out": "SELECT count(*) AS n, sum(s.id) AS sids, sum(b.id) AS bids "
                 "FROM s3 s JOIN intervals b ON s.k >= b.lo AND s.k < b.hi",
    "floor": "SELECT count(*) AS n, sum(id) AS ids FROM (SELECT id FROM s3 WHERE k % 2 = 0 "
             "UNION ALL SELECT id FROM b3 WHERE k % 2 = 0)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the first warms up)")
    args = parser.parse_args()
    data = wl.full_size_data()
    times = {}
    with local_spark("side-switch", conf=SPARK_CONF) as spark:
        for t in ("s3", "b3"):
            spark.read.parquet(os.path.join(data, f"{t}.parquet")).createOrReplaceTempView(t)
        spark.sql("SELECT id, k - 1000000000 AS lo, k - 1000000000 + 500 AS hi FROM b3") \
            .createOrReplaceTempView("intervals")
        for r in range(args.rounds):
            for switch in ("true", "false"):
                spark.conf.set("spark.rangejoin.sideSwitch.enabled", switch)
                for name, query in QUERIES.items():
                    if name == "floor" and switch == "false":
                        continue
                    start = time.perf_counter()
                    answer = spark.sql(query).collect()[0]
                    elapsed = time.perf_counter() - start
                    label = name if name == "floor" else f"{name}, switch {'on' if switch == 'true' else 'off'}"
                    if r == 0:
                        print(f"{label}: {tuple(answer)}")
                    else:
                        times.setdefault(label, []).append(elapsed)
    for label, ts in times.items():
        ts = sorted(ts)
        print(f"{label:24} best {ts[0]:.3f} s, median {ts[len(ts) // 2]:.3f} s")


if __name__ == "__main__":
    main()
