"""The RANGE_JOIN hint: it forces rangejoin for its join, whatever the size thresholds say, with
the hinted relation buffered; a hint rangejoin cannot honour is reported as Spark reports its
own, and the query runs with Spark's plan. Every answer is checked against stock Spark's."""

import pytest

import rangejoin
from helpers import (
    BNLJ,
    PMJ,
    assert_answer_is_stock,
    captured_log,
    join_operators,
    range_join_line,
)

AUTO_BROADCAST = "spark.sql.autoBroadcastJoinThreshold"
HINT_LOGGER = "org.apache.spark.sql.catalyst.analysis.HintErrorLogger"

# small: a = 0..49; big: b = 0..499. Unhinted, an inner join buffers the smaller side (small).
CONDITION = "s.a < b.b AND (s.a + b.b) % 7 = 0"
EXPECTED_ROWS = sum(1 for a in range(50) for b in range(500) if a < b and (a + b) % 7 == 0)


@pytest.fixture(scope="module")
def tables(spark):
    spark.range(0, 50).toDF("a").createOrReplaceTempView("small")
    spark.range(0, 500).toDF("b").createOrReplaceTempView("big")
    yield spark


def query(spark, hint=""):
    hint = f"/*+ {hint} */ " if hint else ""
    return lambda: spark.sql(f"SELECT {hint}* FROM small s JOIN big b ON {CONDITION}")


def build_side(plan):
    line = range_join_line(plan)
    assert line.startswith(f"{PMJ} Inner, "), plan
    return line.split(", ")[1]


@pytest.mark.parametrize("hint, side", [("RANGE_JOIN(b)", "BuildRight"), ("range_join(s)", "BuildLeft")])
@pytest.mark.parametrize(
    "conf",
    [{}, {rangejoin.BROADCAST_THRESHOLD: "-1"}, {AUTO_BROADCAST: "-1"}],
    ids=["default", "rangejoin_threshold_-1", "spark_threshold_-1"],
)
def test_sql_hint_forces_rangejoin_and_picks_the_buffered_side(tables, hint, side, conf):
    # `b` is both big's alias and its column: the hint names the relation, not the column.
    rows, plan = assert_answer_is_stock(tables, query(tables, hint), conf)
    assert build_side(plan) == side, plan
    assert len(rows) == EXPECTED_ROWS


def test_without_the_hint_the_thresholds_decide(tables):
    _, plan = assert_answer_is_stock(tables, query(tables))
    assert build_side(plan) == "BuildLeft", plan  # the smaller side
    _, plan = assert_answer_is_stock(tables, query(tables), {rangejoin.BROADCAST_THRESHOLD: "-1"})
    assert join_operators(plan) == {BNLJ}, plan  # Spark's own plan, under Spark's threshold
    _, plan = assert_answer_is_stock(tables, query(tables), {AUTO_BROADCAST: "-1"})
    assert join_operators(plan) == {"CartesianProduct"}, plan


@pytest.mark.parametrize("hinted, side", [("big", "BuildRight"), ("small", "BuildLeft")])
def test_dataframe_hint(tables, hinted, side):
    def make_df():
        small, big = tables.table("small"), tables.table("big")
        if hinted == "big":
            big = big.hint("range_join")
        else:
            small = small.hint(rangejoin.HINT)
        return small.join(big, (small.a < big.b) & ((small.a + big.b) % 7 == 0))

    conf = {AUTO_BROADCAST: "-1"}
    rows, plan = assert_answer_is_stock(tables, make_df, conf)
    assert build_side(plan) == side, plan
    assert len(rows) == EXPECTED_ROWS


def test_broadcast_hint_picks_the_buffered_side(tables):
    _, plan = assert_answer_is_stock(tables, query(tables, "BROADCAST(b)"))
    assert build_side(plan) == "BuildRight", plan
    # RANGE_JOIN comes first when the two hints name different sides.
    _, plan = assert_answer_is_stock(tables, query(tables, "BROADCAST(b), RANGE_JOIN(s)"))
    assert build_side(plan) == "BuildLeft", plan


def test_hint_on_an_equi_join_is_reported_and_spark_plans_it(tables):
    # An equality key plus a range whose key can fail (ANSI integer addition): the per-key index
    # would evaluate it on rows Spark's hash join never pairs, so the join stays Spark's.
    def make_df():
        return tables.sql(
            "SELECT /*+ RANGE_JOIN(b) */ * FROM small s JOIN big b ON s.a = b.b AND s.a < b.b + 3")

    with captured_log(tables, HINT_LOGGER) as log:
        rows, plan = assert_answer_is_stock(tables, make_df)
    assert PMJ not in plan and join_operators(plan) and join_operators(plan) <= {
        "BroadcastHashJoin", "SortMergeJoin",
                                                         "ShuffledHashJoin"}, plan
    assert len(rows) == 50
    assert (
        "WARN HintErrorLogger: Hint (strategy=range_join) is not supported in the query: "
        "with equality keys, the range keys must not be able to fail" in log[0]
    ), log[0]


def test_hint_with_rangejoin_disabled_is_reported(tables):
    with captured_log(tables, HINT_LOGGER) as log:
        rows, plan = assert_answer_is_stock(
            tables, query(tables, "RANGE_JOIN(b)"), {rangejoin.ENABLED: "false"})
    assert join_operators(plan) == {BNLJ}, plan
    assert len(rows) == EXPECTED_ROWS
    assert (
        "Hint (strategy=range_join) is not supported in the query: spark.rangejoin.enabled is "
        "false" in log[0]
    ), log[0]


def test_hint_naming_an_unknown_relation_is_reported(tables):
    with captured_log(tables, HINT_LOGGER) as log:
        rows, plan = assert_answer_is_stock(tables, query(tables, "RANGE_JOIN(nosuch)"))
    assert build_side(plan) == "BuildLeft", plan  # unhinted
    assert len(rows) == EXPECTED_ROWS
    assert "Count not find relation 'nosuch' specified in hint 'RANGE_JOIN(nosuch)'" in log[0], log[0]


def test_a_honoured_hint_is_not_reported(tables):
    with captured_log(tables, HINT_LOGGER) as log:
        assert_answer_is_stock(tables, query(tables, "RANGE_JOIN(b)"))
    # Only stock Spark's run (rangejoin disabled) may warn.
    reports = [line for line in log[0].splitlines() if "range_join" in line.lower()]
    assert all("spark.rangejoin.enabled is false" in line for line in reports), log[0]
