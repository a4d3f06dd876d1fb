"""Benchmark: range joins in Spark with rangejoin, in stock Spark, and in DuckDB.

Run it with ``make bench`` (which builds and installs the wheel first; ``RANGEJOIN_BENCH_QUICK=1
make bench`` for --quick), or ``python bench/bench.py [--quick] [--sizes 1000000,10000000]
[--repeat 3]`` with a Python that has the wheel, pyspark and duckdb installed. See
bench/README.md.

The data is generated once, by DuckDB, into Parquet files in a temporary directory; both engines
read the same files. Spark runs embedded on local[2], once with ``spark.rangejoin.enabled=true``
(rangejoin) and once with ``false`` (stock Spark); DuckDB runs in-process with 2 threads. The
JVM is first warmed up on the first case; then every case is run once untimed by each engine
(warm-up), then timed ``--repeat`` times; the table shows the medians. Each engine's answer (counts and integer checksums) must equal the others', and
rangejoin's plans must use PiecewiseMergeJoin and stock Spark's must not: otherwise the benchmark
stops with an error.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field

import duckdb

import rangejoin
from local_spark import executed_plan, local_spark

PMJ = "PiecewiseMergeJoin"
THREADS = 2

@dataclass
class Case:
    name: str
    shape: str
    sql: str  # the same text runs on both engines
    tables: dict  # view name -> parquet file stem
    slow_stock: bool = False  # skipped for stock Spark by --quick
    results: dict = field(default_factory=dict)  # engine -> (answer, [seconds])


def human(n: int) -> str:
    for unit, size in (("M", 1_000_000), ("K", 1_000)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def generate(con, directory: str, sizes) -> None:
    """Writes every table, once, as Parquet, with DuckDB."""

    def write(stem: str, select: str) -> None:
        con.execute(f"COPY ({select}) TO '{os.path.join(directory, stem)}.parquet' (FORMAT parquet)")

    # Integers: t1.v1 = 1..1,000 and t2.v1 = 1..N, as in the demo.
    write("t1", "SELECT range + 1 AS v1 FROM range(1000)")
    for n in sizes:
        write(f"t2_{n}", f"SELECT range + 1 AS v1 FROM range({n})")
    # Events, one a second from 2024-01-01, with a pseudo-random double x in [0, 1) and a
    # double y = the event's number; windows, whose times and doubles cover the first events.
    write(
        "events",
        "SELECT range AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(range) AS ts, "
        "CAST((range * 2654435761) % 1000003 AS DOUBLE) / 1000003 AS x, "
        "CAST(range AS DOUBLE) AS y FROM range(1000000)",
    )
    write(
        "windows",
        "SELECT range AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(range + 1) AS ts, "
        "CAST(range % 100 AS DOUBLE) / 100 AS p, CAST(range AS DOUBLE) + 0.5 AS q FROM range(1000)",
    )


def cases(sizes, quick_limit):
    out = []
    for n in sizes:
        out.append(Case(
            f"(a) inner, demo query", f"1K x {human(n)}",
            "SELECT count(*) AS n FROM t1 JOIN t2 ON t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 2 = 0",
            {"t1": "t1", "t2": f"t2_{n}"}, slow_stock=n > quick_limit))
    n = sizes[0]
    out.append(Case(
        "(b) left outer + residual", f"{human(n)} x 1K",
        "SELECT count(*) AS n, count(t1.v1) AS matched, sum(t1.v1) AS s1, sum(t2.v1) AS s2 "
        "FROM t2 LEFT JOIN t1 ON t2.v1 <= t1.v1 AND (t1.v1 - t2.v1) % 7 = 0",
        {"t1": "t1", "t2": f"t2_{n}"}, slow_stock=n > quick_limit))
    out.append(Case(
        "(c) semi: EXISTS, correlated <", f"{human(n)} x 1K",
        "SELECT count(*) AS n, sum(t2.v1) AS s FROM t2 "
        "WHERE EXISTS (SELECT 1 FROM t1 WHERE t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 5 = 0)",
        {"t1": "t1", "t2": f"t2_{n}"}, slow_stock=n > quick_limit))
    out.append(Case(
        "(d) timestamp key, double resid.", "1K x 1M",
        "SELECT count(*) AS n, sum(e.id) AS se, sum(w.id) AS sw FROM windows w "
        "JOIN events e ON e.ts < w.ts AND e.x < w.p",
        {"events": "events", "windows": "windows"}))
    out.append(Case(
        "(d) double key, double resid.", "1K x 1M",
        "SELECT count(*) AS n, sum(e.id) AS se, sum(w.id) AS sw FROM windows w "
        "JOIN events e ON e.y <= w.q AND e.x >= 0.5",
        {"events": "events", "windows": "windows"}))
    return out


def fail(message: str) -> None:
    print(f"\nBENCHMARK ABORTED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def run_spark(spark, case: Case, directory: str, enabled: bool):
    """One run: (answer as a tuple of ints, seconds)."""
    spark.conf.set(rangejoin.ENABLED, "true" if enabled else "false")
    for view, stem in case.tables.items():
        spark.read.parquet(os.path.join(directory, f"{stem}.parquet")).createOrReplaceTempView(view)
    df = spark.sql(case.sql)
    start = time.perf_counter()
    rows = df.collect()
    seconds = time.perf_counter() - start
    plan = executed_plan(df)
    if enabled and PMJ not in plan:
        fail(f"rangejoin did not plan {case.name} ({case.shape}) as a {PMJ}:\n{plan}")
    if not enabled and PMJ in plan:
        fail(f"stock Spark (rangejoin disabled) planned {case.name} as a {PMJ}:\n{plan}")
    return tuple(int(v) if v is not None else None for v in rows[0]), seconds


def run_duckdb(con, case: Case, directory: str):
    for view, stem in case.tables.items():
        path = os.path.join(directory, f"{stem}.parquet")
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet('{path}')")
    start = time.perf_counter()
    row = con.execute(case.sql).fetchone()
    seconds = time.perf_counter() - start
    return tuple(int(v) if v is not None else None for v in row), seconds


def measure(case: Case, engine: str, run, repeat: int) -> None:
    answer, _ = run()  # warm-up, untimed
    times = []
    for _ in range(repeat):
        again, seconds = run()
        if again != answer:
            fail(f"{engine} gave {again} then {answer} for {case.name} ({case.shape})")
        times.append(seconds)
    case.results[engine] = (answer, times)
    runs = ", ".join(f"{t:.3f}" for t in times)
    print(f"  {engine:<12} median {statistics.median(times):7.3f} s (runs: {runs})  answer {answer}",
          flush=True)


def table(all_cases, repeat: int) -> str:
    header = (f"{'case':<34} {'rows':<9} {'stock Spark':>11} {'rangejoin':>10} {'DuckDB':>9}"
              f" {'stock/rangejoin':>16} {'rangejoin/DuckDB':>17}")
    lines = [header, "-" * len(header)]
    for case in all_cases:
        med = {e: statistics.median(t) for e, (_, t) in case.results.items()}
        stock = f"{med['stock Spark']:9.3f} s" if "stock Spark" in med else f"{'skipped':>11}"
        ratio_stock = (f"{med['stock Spark'] / med['rangejoin']:15.1f}x"
                       if "stock Spark" in med else f"{'-':>16}")
        lines.append(
            f"{case.name:<34} {case.shape:<9} {stock} {med['rangejoin']:8.3f} s"
            f" {med['DuckDB']:7.3f} s {ratio_stock} {med['rangejoin'] / med['DuckDB']:16.1f}x")
    lines.append("")
    lines.append(f"Wall times: median of {repeat} timed runs per engine, after one untimed warm-up run"
                 " (and a JVM warm-up on the first case);")
    lines.append("stock/rangejoin > 1: rangejoin is faster than stock Spark;"
                 " rangejoin/DuckDB > 1: DuckDB is faster than rangejoin.")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000",
                        help="comma-separated row counts of t2 for case (a); the first is also "
                             "used for (b) and (c) (default: 1000000,10000000)")
    parser.add_argument("--quick", action="store_true",
                        default=os.environ.get("RANGEJOIN_BENCH_QUICK", "") not in ("", "0"),
                        help="skip the slowest runs: stock Spark on t2 larger than 1M rows "
                             "(also set by the environment variable RANGEJOIN_BENCH_QUICK=1, "
                             "for `make bench`)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (default: 3)")
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if not sizes or args.repeat < 1:
        parser.error("--sizes needs at least one size and --repeat at least 1")
    quick_limit = 1_000_000 if args.quick else float("inf")

    with tempfile.TemporaryDirectory(prefix="rangejoin-bench-") as directory:
        con = duckdb.connect()
        con.execute(f"SET threads = {THREADS}")
        print(f"Generating Parquet data with DuckDB in {directory} ...", flush=True)
        generate(con, directory, sizes)
        print("Starting Spark (local[2]) ...", flush=True)
        with local_spark("rangejoin-bench", THREADS, {"spark.driver.memory": "4g"}) as spark:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"rangejoin {rangejoin.__version__}, Spark {spark.version}, DuckDB {duckdb.__version__},"
                  f" {os.cpu_count()} CPUs (load average {load:.1f} at start), {THREADS} threads each")
            all_cases = cases(sizes, quick_limit)
            # A fresh JVM needs more than one run to compile its hot code: warm it up on the first
            # case (twice each way, untimed) before any case's own warm-up and timed runs.
            print("\nWarming up the JVM (the first case, twice each way, untimed) ...", flush=True)
            for _ in range(2):
                for enabled in (True, False):
                    run_spark(spark, all_cases[0], directory, enabled)
            for case in all_cases:
                print(f"\n{case.name} [{case.shape}]: {case.sql}", flush=True)
                measure(case, "rangejoin", lambda: run_spark(spark, case, directory, True), args.repeat)
                if args.quick and case.slow_stock:
                    print("  stock Spark  skipped (--quick)")
                else:
                    measure(case, "stock Spark", lambda: run_spark(spark, case, directory, False),
                            args.repeat)
                measure(case, "DuckDB", lambda: run_duckdb(con, case, directory), args.repeat)
                answers = {engine: answer for engine, (answer, _) in case.results.items()}
                if len(set(answers.values())) != 1:
                    fail(f"the engines disagree on {case.name} ({case.shape}): {answers}")
                print(f"  answers agree: {answers['rangejoin']}")
            spark.conf.unset(rangejoin.ENABLED)
        con.close()
    print()
    print(table(all_cases, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
