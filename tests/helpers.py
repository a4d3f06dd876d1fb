"""Helpers shared by the join tests: plans, operators, and row comparisons."""

import contextlib
import datetime as dt
import math
import re

from pyspark.sql import DataFrame, SparkSession

import rangejoin

PMJ = "PiecewiseMergeJoin"
BNLJ = "BroadcastNestedLoopJoin"
JOIN_OPERATORS = (
    PMJ,
    BNLJ,
    "CartesianProduct",
    "BroadcastHashJoin",
    "SortMergeJoin",
    "ShuffledHashJoin",
)


def final_plan(df: DataFrame) -> str:
    """The executed plan of ``df``; for an adaptive plan, its final part only.

    Call it after an action ran on ``df``: before that, an adaptive plan is not final.
    """
    plan = df._jdf.queryExecution().executedPlan().toString()
    return plan.split("== Initial Plan ==")[0]


def join_operators(plan: str) -> set:
    """The names of the join operators that ``plan`` contains."""
    return {op for op in JOIN_OPERATORS if op in plan}


def canonical(value):
    """A sortable, exactly comparable stand-in for one value: NULL, NaN and -0.0 stay distinct."""
    if value is None:
        return (0, "")
    if isinstance(value, float):
        return (1, repr(value))
    return (2, value)


def canonical_rows(rows) -> list:
    """``rows`` as a sorted list of canonical tuples: equal lists are equal multisets of rows."""
    return sorted(tuple(canonical(v) for v in row) for row in rows)


def collect(spark: SparkSession, make_df, enabled: bool):
    """Plan and run ``make_df()`` with rangejoin on or off: (rows, final plan).

    ``make_df`` builds a new DataFrame each time, since a DataFrame keeps the plan it got first.
    """
    spark.conf.set(rangejoin.ENABLED, "true" if enabled else "false")
    try:
        df = make_df()
        rows = df.collect()
        return rows, final_plan(df)
    finally:
        spark.conf.unset(rangejoin.ENABLED)


def assert_rangejoin_matches_stock(spark: SparkSession, make_df) -> list:
    """Assert that ``make_df()`` runs as a PiecewiseMergeJoin, with the same rows as stock Spark.

    Stock Spark is the same query with ``spark.rangejoin.enabled=false``, which must plan a
    BroadcastNestedLoopJoin instead. Returns rangejoin's rows.
    """
    rows, plan = collect(spark, make_df, enabled=True)
    stock_rows, stock_plan = collect(spark, make_df, enabled=False)
    assert PMJ in plan, f"expected {PMJ} in the plan:\n{plan}"
    assert BNLJ not in plan, f"expected no {BNLJ} in the plan:\n{plan}"
    assert PMJ not in stock_plan, f"rangejoin disabled, yet {PMJ} planned:\n{stock_plan}"
    assert BNLJ in stock_plan, f"expected stock Spark to plan a {BNLJ}:\n{stock_plan}"
    assert canonical_rows(rows) == canonical_rows(stock_rows), (
        f"rangejoin's rows differ from stock Spark's\nrangejoin: {sorted(map(str, rows))}\n"
        f"stock:     {sorted(map(str, stock_rows))}\nplan:\n{plan}"
    )
    return rows


NAN = float("nan")
INF = float("inf")


def _d(day):
    return None if day is None else dt.date(2024, 1, day)


def _ts(minute):
    return None if minute is None else dt.datetime(2024, 3, 1, 12, 0) + dt.timedelta(minutes=minute)


# Join keys per type, for the left (a) and right (b) tables: NULLs, duplicates, and for doubles
# NaN (equal to itself and above everything in Spark), -0.0 (equal to 0.0) and infinities.
KEYS = {
    "bigint": (
        [None, 1, 2, 2, 3, 5, 5, 8, None, -1, 10],
        [None, 0, 2, 2, 4, 5, 7, 7, 9, None, -3],
    ),
    "double": (
        [None, NAN, -0.0, 0.0, 1.5, 1.5, -2.0, INF, -INF, 3.0, NAN],
        [NAN, 0.0, -0.0, 1.5, 2.0, None, -INF, INF, 1.5, -1.0, NAN],
    ),
    "date": (
        [_d(d) for d in [None, 1, 3, 3, 5, 8, 8, 12, None, 2, 20]],
        [_d(d) for d in [None, 2, 3, 3, 6, 8, 9, 9, 15, None, 1]],
    ),
    "timestamp": (
        [_ts(m) for m in [None, 0, 30, 30, 45, 90, 90, 120, None, -15, 600]],
        [_ts(m) for m in [None, 10, 30, 30, 60, 90, 100, 100, 300, None, -60]],
    ),
    "string": (
        [None, "a", "b", "b", "ba", "c", "c", "", None, "Z", "zz"],
        [None, "", "b", "b", "bb", "c", "ca", "ca", "d", None, "A"],
    ),
}


def sql_literal(value, sql_type: str) -> str:
    """``value`` as a Spark SQL literal of type ``sql_type``."""
    if value is None:
        return f"CAST(NULL AS {sql_type})"
    if sql_type == "double":
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        return f"CAST({value!r} AS DOUBLE)"  # repr keeps -0.0
    if sql_type == "date":
        return f"DATE'{value.isoformat()}'"
    if sql_type == "timestamp":
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    if sql_type == "string":
        return "'" + value.replace("'", "''") + "'"
    return str(int(value))


def local_table(spark: SparkSession, columns, types, rows) -> DataFrame:
    """A DataFrame of ``rows`` from an inline VALUES table.

    Unlike ``spark.createDataFrame(list)``, whose scan of a Python RDD has no size estimate (so
    Spark would broadcast neither side and plan a CartesianProduct), a VALUES table is a local
    relation of known size, small enough to broadcast.
    """
    values = ", ".join(
        "(" + ", ".join(sql_literal(v, t) for v, t in zip(row, types)) + ")" for row in rows
    )
    return spark.sql(f"SELECT * FROM VALUES {values} AS t({', '.join(columns)})")


def key_tables(spark: SparkSession, key_type: str):
    """Two small DataFrames ``l(id, a, x)`` and ``r(id, b, y)`` keyed by ``key_type`` values."""
    left_keys, right_keys = KEYS[key_type]
    left = local_table(
        spark, ["id", "a", "x"], ["int", key_type, "int"],
        [(i, k, i % 4) for i, k in enumerate(left_keys)],
    )
    right = local_table(
        spark, ["id", "b", "y"], ["int", key_type, "int"],
        [(100 + i, k, (i * 7) % 5) for i, k in enumerate(right_keys)],
    )
    return left, right


@contextlib.contextmanager
def sql_conf(spark: SparkSession, conf: dict):
    """Within the block, the session's SQL configuration has ``conf`` set; afterwards each key is
    back to what it was (unset, if it was not set)."""
    jconf = spark._jsparkSession.sessionState().conf()
    saved = {key: jconf.getConfString(key) if jconf.contains(key) else None for key in conf}
    try:
        for key, value in conf.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def run(spark: SparkSession, make_df, conf: dict = None):
    """Plan and run ``make_df()`` with the SQL configuration ``conf``: (rows, final plan)."""
    with sql_conf(spark, conf or {}):
        df = make_df()
        rows = df.collect()
        return rows, final_plan(df)


def assert_answer_is_stock(spark: SparkSession, make_df, conf: dict = None):
    """Run ``make_df()`` under ``conf``, and again as stock Spark (``conf`` plus rangejoin
    disabled); assert the rows are the same. Returns (rows, plan) of the run under ``conf``."""
    rows, plan = run(spark, make_df, conf)
    stock_rows, stock_plan = run(spark, make_df, {**(conf or {}), rangejoin.ENABLED: "false"})
    assert PMJ not in stock_plan, f"rangejoin disabled, yet {PMJ} planned:\n{stock_plan}"
    assert canonical_rows(rows) == canonical_rows(stock_rows), (
        f"the rows differ from stock Spark's\nrows:  {sorted(map(str, rows))[:50]}\n"
        f"stock: {sorted(map(str, stock_rows))[:50]}\nplan:\n{plan}"
    )
    return rows, plan


def range_join_line(plan: str) -> str:
    """The PiecewiseMergeJoin line of ``plan`` (its join type, build side, predicate), without the
    ``*(n)`` that marks a node of a whole-stage codegen stage."""
    lines = [re.sub(r"^\*\(\d+\) ", "", line.strip(" +-:")) for line in plan.splitlines() if PMJ in line]
    assert len(lines) == 1, f"expected one {PMJ} in the plan:\n{plan}"
    return lines[0]


@contextlib.contextmanager
def captured_log(spark: SparkSession, logger_name: str, level: str = "WARN"):
    """Captures what the JVM logger ``logger_name`` logs at ``level`` and above, within the
    block, into the returned list's one string (read it after the block)."""
    jvm = spark._jvm
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    writer = jvm.java.io.StringWriter()
    layout = log4j.core.layout.PatternLayout.newBuilder().withPattern("%p %c{1}: %m%n").build()
    appender = log4j.core.appender.WriterAppender.createAppender(
        layout, None, writer, f"rangejoin-pytest-{id(writer)}", False, True)
    appender.start()
    logger = context.getLogger(logger_name)
    old_level, old_additive = logger.getLevel(), logger.isAdditive()
    # Appender and additivity first: each may give the logger a configuration of its own, which
    # resets its level to its parent's; the level is set last, through that configuration.
    logger.addAppender(appender)
    logger.setAdditive(False)  # only into the capture, not onto the console
    configurator = log4j.core.config.Configurator
    configurator.setLevel(logger_name, getattr(log4j.Level, level))
    captured = []
    try:
        yield captured
    finally:
        logger.removeAppender(appender)
        logger.setAdditive(old_additive)
        configurator.setLevel(logger_name, old_level)
        appender.stop()
        captured.append(str(writer.toString()))
