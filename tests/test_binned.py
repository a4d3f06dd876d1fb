"""Band joins too large to broadcast: with broadcasting off, rangejoin rewrites a band join into
Spark's own equi-join on bins (its EXPLAIN names the ``RangeJoin`` bin generators) instead of the
cartesian product stock Spark plans; the answer is stock Spark's."""

import pytest

import rangejoin
from helpers import assert_answer_is_stock, sql_conf

NO_BROADCAST = {
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    rangejoin.BROADCAST_THRESHOLD: "-1",
}


@pytest.fixture(scope="module")
def band_tables(spark):
    spark.range(0, 3000).selectExpr("id AS pid", "(id * 7919) % 5000 - 100 AS x") \
        .createOrReplaceTempView("binned_points")
    spark.range(0, 400).selectExpr(
        "id AS iid", "(id * 104729) % 5000 AS lo", "(id * 104729) % 5000 + id % 40 AS hi") \
        .createOrReplaceTempView("binned_intervals")
    yield spark


def explain(spark, make_df) -> str:
    with sql_conf(spark, NO_BROADCAST):
        df = make_df()
        return df._jdf.queryExecution().toString()  # what EXPLAIN EXTENDED prints


@pytest.mark.parametrize("how", ["sql", "dataframe", "hinted bin size"])
def test_band_join_too_large_to_broadcast(band_tables, how):
    spark = band_tables

    def make_df():
        if how == "sql":
            return spark.sql("SELECT * FROM binned_points p JOIN binned_intervals i "
                             "ON p.x BETWEEN i.lo AND i.hi")
        if how == "hinted bin size":
            return spark.sql("SELECT /*+ RANGE_JOIN(i, 16) */ * FROM binned_points p "
                             "JOIN binned_intervals i ON p.x >= i.lo AND p.x < i.hi")
        p, i = spark.table("binned_points"), spark.table("binned_intervals")
        return p.join(i, (p.x >= i.lo) & (p.x <= i.hi))

    rows, plan = assert_answer_is_stock(spark, make_df, NO_BROADCAST)
    assert len(rows) > 0
    assert "CartesianProduct" not in plan and "BroadcastNestedLoopJoin" not in plan, plan
    # A shuffled equi-join on the bins: rangejoin's own, sorting each partition of the intervals.
    assert "ShuffledPiecewiseMergeJoin" in plan, plan
    # Without it, Spark's own shuffled join on the same bins.
    conf = {**NO_BROADCAST, rangejoin.SHUFFLE_MAX_PARTITION_SIZE: "-1"}
    _, plan = assert_answer_is_stock(spark, make_df, conf)
    assert "SortMergeJoin" in plan or "ShuffledHashJoin" in plan, plan
    text = explain(spark, make_df)
    assert "RangeJoin" in text and "CartesianProduct" not in text, text
