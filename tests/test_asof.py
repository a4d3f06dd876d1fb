"""As-of joins (rangejoin.asof_join over DataFrame._joinAsOf, and SQL ASOF JOIN): planned as
PiecewiseMergeAsOfJoin, and returning exactly stock Spark's rows (rangejoin disabled)."""

import datetime as dt

import pytest

import rangejoin
from helpers import canonical_rows, collect, sql_conf

OPERATOR = "PiecewiseMergeAsOfJoin"

# Trades and quotes per symbol: one quote per (sym, ts), so every match is determined; NULL
# times and symbols on both sides, a quote exactly at a trade's time, and one 5 s before another.
TRADES = """VALUES
  (1, 'A', TIMESTAMP'2024-01-01 10:00:05', 100), (2, 'A', TIMESTAMP'2024-01-01 10:00:10', 200),
  (3, 'B', TIMESTAMP'2024-01-01 10:00:07', 300), (4, 'B', TIMESTAMP'2024-01-01 09:59:00', 400),
  (5, NULL, TIMESTAMP'2024-01-01 10:00:05', 500), (6, 'A', NULL, 600),
  (7, 'C', TIMESTAMP'2024-01-01 10:00:05', 700) AS trades(id, sym, ts, qty)"""
QUOTES = """VALUES
  ('A', TIMESTAMP'2024-01-01 10:00:00', 10.0), ('A', TIMESTAMP'2024-01-01 10:00:05', 10.5),
  ('A', TIMESTAMP'2024-01-01 10:00:12', 11.0), ('B', TIMESTAMP'2024-01-01 10:00:02', 20.0),
  ('B', TIMESTAMP'2024-01-01 10:00:09', 21.0), (NULL, TIMESTAMP'2024-01-01 10:00:05', 99.0),
  ('A', NULL, 98.0) AS quotes(sym, ts, bid)"""


def tables(spark):
    return spark.sql(f"SELECT * FROM {TRADES}"), spark.sql(f"SELECT * FROM {QUOTES}")


@pytest.mark.parametrize("direction", ["backward", "forward", "nearest"])
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("tolerance", [None, dt.timedelta(seconds=5)])
def test_asof_join_matches_stock(spark, direction, exact, tolerance):
    def query():
        trades, quotes = tables(spark)
        return rangejoin.asof_join(trades, quotes, on="ts", by="sym", tolerance=tolerance,
                                   allow_exact_matches=exact, direction=direction)

    rows, plan = collect(spark, query, enabled=True)
    stock_rows, stock_plan = collect(spark, query, enabled=False)
    assert OPERATOR in plan, plan
    assert OPERATOR not in stock_plan, stock_plan
    assert canonical_rows(rows) == canonical_rows(stock_rows)
    assert len(rows) == 7  # a left join: every trade once


def test_asof_join_names_columns_as_pandas(spark):
    trades, quotes = tables(spark)
    joined = rangejoin.asof_join(trades, quotes, on="ts", by="sym")
    assert joined.columns == ["id", "sym", "ts", "qty", "bid"]
    renamed = rangejoin.asof_join(trades, quotes.withColumnRenamed("bid", "qty"), on="ts", by="sym")
    assert renamed.columns == ["id", "sym", "ts", "qty_x", "qty_y"]
    row = {r.id: r for r in joined.collect()}
    assert row[1].bid == 10.5  # a quote at the trade's very time
    assert row[4].bid is None  # before every B quote
    assert row[5].bid is None and row[6].bid is None  # a NULL symbol, a NULL time


def test_asof_join_checks_its_arguments(spark):
    trades, quotes = tables(spark)
    with pytest.raises(ValueError):
        rangejoin.asof_join(trades, quotes, on="ts", direction="sideways")
    with pytest.raises(TypeError):
        rangejoin.asof_join(trades, quotes, by="sym")
    with pytest.raises(TypeError):
        rangejoin.asof_join(trades, quotes, on="ts", tolerance="5 seconds")


@pytest.mark.parametrize("condition", ["t.ts >= q.ts", "t.ts < q.ts"])
def test_sql_asof_join_matches_stock(spark, condition):
    rangejoin.asof_sql(spark)
    try:
        def query():
            trades, quotes = tables(spark)
            trades.createOrReplaceTempView("asof_trades")
            quotes.createOrReplaceTempView("asof_quotes")
            return spark.sql(f"SELECT t.id, q.bid FROM asof_trades t LEFT ASOF JOIN asof_quotes q "
                             f"MATCH_CONDITION ({condition}) ON t.sym = q.sym")

        rows, plan = collect(spark, query, enabled=True)
        stock_rows, stock_plan = collect(spark, query, enabled=False)
    finally:
        rangejoin.asof_sql(spark, enabled=False)
    assert OPERATOR in plan, plan
    assert "SortMergeAsOfJoin" in stock_plan, stock_plan
    assert canonical_rows(rows) == canonical_rows(stock_rows)


@pytest.mark.parametrize("by, operator", [("sym", "ShuffledPiecewiseMergeAsOfJoin"),
                                          (None, "TimeRangedPiecewiseMergeAsOfJoin")])
def test_asof_join_with_no_side_to_broadcast_is_shuffled(spark, by, operator):
    """Nothing broadcast: a keyed join searches each shuffle partition's quotes, one without keys
    each range of time's; stock's rows."""
    nothing_broadcast = {"spark.sql.autoBroadcastJoinThreshold": "-1", rangejoin.BROADCAST_THRESHOLD: "-1"}
    with sql_conf(spark, nothing_broadcast):
        def query():
            trades, quotes = tables(spark)
            return rangejoin.asof_join(trades, quotes, on="ts", by=by, direction="nearest")

        rows, plan = collect(spark, query, enabled=True)
        stock_rows, stock_plan = collect(spark, query, enabled=False)
    assert operator in plan, plan
    assert OPERATOR not in stock_plan, stock_plan
    assert canonical_rows(rows) == canonical_rows(stock_rows)
    assert len(rows) == 7


def test_unmatched_rows_of_non_nullable_columns(spark):
    # VALUES columns without NULLs are non-nullable: a left join pads them with NULLs all the same.
    def query():
        trades = spark.sql("SELECT * FROM VALUES (1, 5), (2, 1) AS t(id, ts)")
        quotes = spark.sql("SELECT * FROM VALUES (3, 30) AS q(ts, bid)")
        return rangejoin.asof_join(trades, quotes, on="ts")

    rows, plan = collect(spark, query, enabled=True)
    stock_rows, _ = collect(spark, query, enabled=False)
    assert OPERATOR in plan, plan
    assert canonical_rows(rows) == canonical_rows(stock_rows)
    assert sorted(map(tuple, rows)) == [(1, 5, 30), (2, 1, None)]


def test_sql_asof_syntax_needs_spark_4_3():
    """Before Spark 4.3 the parser has no ASOF JOIN: switching it on says so (and what works)."""

    class Conf(dict):
        def set(self, key, value):
            self[key] = value

    class OlderSpark:
        version = "4.2.1"
        conf = Conf()

    with pytest.raises(rangejoin.UnsupportedSparkVersionError, match="asof_join"):
        rangejoin.asof_sql(OlderSpark())
    assert OlderSpark.conf == {}
    rangejoin.asof_sql(OlderSpark(), enabled=False)  # switching it off is harmless anywhere
    assert OlderSpark.conf == {rangejoin.ASOF_SQL: "false"}


@pytest.mark.parametrize("options", [
    {"on": "ts", "by": "sym"},
    {"on": "ts", "by": "sym", "direction": "forward", "allow_exact_matches": False},
    {"on": "ts", "by": "sym", "direction": "nearest", "tolerance": dt.timedelta(seconds=5)},
    {"left_on": "ts", "right_on": "qts", "left_by": "sym", "right_by": "qsym", "suffixes": ("_t", "_q")},
])
def test_pandas_on_spark_merge_asof_matches_stock(spark, options):
    """pandas-on-Spark's merge_asof (its own call of DataFrame._joinAsOf, with its own column
    handling) runs as PiecewiseMergeAsOfJoin and returns stock Spark's rows."""
    import pyspark.pandas as ps

    def query():
        trades, quotes = tables(spark)
        if "right_on" in options:
            quotes = quotes.withColumnRenamed("ts", "qts").withColumnRenamed("sym", "qsym")
        # merge_asof needs both sides sorted on its key, as pandas' does: sorted here on Spark.
        merged = ps.merge_asof(trades.pandas_api().sort_values("ts"), quotes.pandas_api().sort_values(
            options.get("right_on", "ts")), **options)
        return merged.spark.frame()

    rows, plan = collect(spark, query, enabled=True)
    stock_rows, stock_plan = collect(spark, query, enabled=False)
    assert OPERATOR in plan, plan
    assert OPERATOR not in stock_plan, stock_plan
    assert canonical_rows(rows) == canonical_rows(stock_rows)
    assert len(rows) == 7
