"""As-of join of trades with quotes (the latest quote of the trade's symbol at or before it):
rangejoin's PiecewiseMergeAsOfJoin against stock Spark's two plans (SQL ASOF JOIN's
SortMergeAsOfJoin; the DataFrame path's RewriteAsOfJoin, O(N x M), at a reduced size) and
DuckDB's ASOF JOIN, on the same rows. Quote times are unique, so every engine's answer is
determined; each run checks (matched trades, sum of matched bids) against DuckDB's.

    .venv/bin/python -m bench.probes.asof_trades_quotes [--trades 1000000] [--quotes 100000] [--runs 3]
        [--no-broadcast] [--no-key] [--no-codegen]

With --no-codegen whole-stage code generation is off: the same joins, interpreted.
With --no-broadcast neither engine broadcasts a side: rangejoin buffers the quotes per shuffle
partition by symbol (ShuffledPiecewiseMergeAsOfJoin), stock Spark runs SortMergeAsOfJoin as before.
With --no-key the join has no symbol key (each trade's latest quote of any symbol): stock Spark's
sort-merge operator runs it in one task, so stock runs only at the smaller size; with
--no-broadcast too, rangejoin splits both sides into ranges of time
(TimeRangedPiecewiseMergeAsOfJoin).
"""

import argparse
import time

import duckdb

import rangejoin
from bench.local_spark import SPARK_CONF, local_spark

SYMBOLS = 100


def trades_sql(n: int) -> str:
    return (f"SELECT id, (id * 40503 + 7) % {SYMBOLS} AS sym, "
            f"(id * 2654435761 + 12345) % {n * 10} AS ts FROM range({n}) AS r(id)")


def quotes_sql(m: int, n: int) -> str:
    # Times id * (10n / m) + 1: unique, spread over the trades' span.
    return (f"SELECT id % {SYMBOLS} AS sym, id * {max(1, 10 * n // m)} + 1 AS ts, id % 1000 AS bid "
            f"FROM range({m}) AS r(id)")


def asof_sql(keyed: bool) -> str:
    return ("SELECT count(q.bid) AS matched, sum(q.bid) AS bids FROM trades t LEFT ASOF JOIN quotes q "
            "MATCH_CONDITION (t.ts >= q.ts)" + (" ON t.sym = q.sym" if keyed else ""))


def duckdb_sql(keyed: bool) -> str:
    return ("SELECT count(q.bid) AS matched, sum(q.bid) AS bids FROM trades t ASOF LEFT JOIN quotes q "
            "ON " + ("t.sym = q.sym AND " if keyed else "") + "t.ts >= q.ts")


def best_of(runs: int, run):
    best, answer = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        answer = run()
        best = min(best, time.perf_counter() - start)
    return best, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trades", type=int, default=1_000_000)
    parser.add_argument("--quotes", type=int, default=100_000)
    parser.add_argument("--stock-trades", type=int, default=10_000,
                        help="trades for stock Spark's DataFrame path (O(N x M)), with --stock-quotes")
    parser.add_argument("--stock-quotes", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-broadcast", action="store_true",
                        help="neither engine broadcasts a side (both thresholds -1)")
    parser.add_argument("--no-key", action="store_true", help="no symbol key: the latest quote of any symbol")
    parser.add_argument("--no-codegen", action="store_true",
                        help="whole-stage code generation off (both engines): the joins interpreted")
    args = parser.parse_args()

    def duck(n, m):
        con = duckdb.connect()
        con.execute(f"CREATE TABLE trades AS {trades_sql(n)}")
        con.execute(f"CREATE TABLE quotes AS {quotes_sql(m, n)}")
        return best_of(args.runs, lambda: tuple(int(v or 0) for v in con.execute(duckdb_sql(not args.no_key)).fetchone()))

    with local_spark("asof-trades-quotes", conf=SPARK_CONF) as spark:
        rangejoin.asof_sql(spark)
        if args.no_codegen:
            spark.conf.set("spark.sql.codegen.wholeStage", "false")
        if args.no_broadcast:
            spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
            spark.conf.set(rangejoin.BROADCAST_THRESHOLD, "-1")

        def views(n, m):
            spark.sql(f"CREATE OR REPLACE TEMP VIEW trades AS {trades_sql(n)}")
            spark.sql(f"CREATE OR REPLACE TEMP VIEW quotes AS {quotes_sql(m, n)}")
            spark.sql("CACHE TABLE trades")
            spark.sql("CACHE TABLE quotes")

        def sql_run():
            row = spark.sql(asof_sql(not args.no_key)).collect()[0]
            return int(row.matched), int(row.bids or 0)

        def dataframe_run():
            joined = rangejoin.asof_join(spark.table("trades"), spark.table("quotes"), on="ts", by=None if args.no_key else "sym")
            row = joined.selectExpr("count(bid) AS matched", "sum(bid) AS bids").collect()[0]
            return int(row.matched), int(row.bids or 0)

        def engine(enabled, run):
            spark.conf.set(rangejoin.ENABLED, enabled)
            run()  # warm-up
            return best_of(args.runs, run)

        print(f"{'path':<34} {'trades':>9} {'quotes':>8} {'seconds':>8}  answer", flush=True)
        # Without a key, stock's SQL operator (it never broadcasts) runs in one task: only small.
        one_task = args.no_key
        large_sql = ("true",) if one_task else ("true", "false")
        small = [("SQL ASOF JOIN", sql_run, ("true", "false"))] if one_task else []
        for n, m, paths in [(args.trades, args.quotes, [("SQL ASOF JOIN", sql_run, large_sql),
                                                        ("DataFrame _joinAsOf", dataframe_run, ("true",))]),
                            (args.stock_trades, args.stock_quotes,
                             small + [("DataFrame _joinAsOf", dataframe_run, ("true", "false"))])]:
            views(n, m)
            expected = duck(n, m)
            print(f"{'DuckDB ASOF JOIN':<34} {n:>9,} {m:>8,} {expected[0]:>8.3f}  {expected[1]}", flush=True)
            for name, run, engines in paths:
                for enabled in engines:
                    seconds, answer = engine(enabled, run)
                    label = f"{name} ({'rangejoin' if enabled == 'true' else 'stock'})"
                    check = "" if answer == expected[1] else f"  DIFFERS from DuckDB's {expected[1]}"
                    print(f"{label:<34} {n:>9,} {m:>8,} {seconds:>8.3f}  {answer}{check}", flush=True)
            spark.sql("UNCACHE TABLE trades")
            spark.sql("UNCACHE TABLE quotes")


if __name__ == "__main__":
    main()
