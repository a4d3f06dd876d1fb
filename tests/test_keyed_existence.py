"""Keyed semi and anti joins with one inequality, through PySpark: the subquery side is reduced to
each key's extreme by Spark's own aggregate (EXPLAIN shows RangeJoinMax or RangeJoinMin), and
the answer is stock Spark's (the same query with spark.rangejoin.enabled=false)."""

import pytest

from helpers import canonical_rows, run

import rangejoin


@pytest.fixture(scope="module")
def tables(spark):
    # Points and intervals on three chromosomes, with NULL chromosomes and positions on both
    # sides, a chromosome whose intervals all lack a start, and one no interval is on.
    points = [(i, ["1", "2", "X", "Y", None][i % 5], None if i % 11 == 0 else i % 40) for i in range(100)]
    intervals = [
        (j, ["1", "1", "1", "2", "X", None][j % 6], None if j % 6 == 4 or j % 13 == 0 else 3 * (j % 17))
        for j in range(60)
    ]
    spark.createDataFrame(points, "id INT, chr STRING, x BIGINT").createOrReplaceTempView("kp")
    spark.createDataFrame(intervals, "id INT, chr STRING, lo BIGINT").createOrReplaceTempView("ki")
    return spark


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM kp p WHERE EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND i.lo > 2 * p.x)",
        "SELECT * FROM kp p WHERE NOT EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND i.lo > 2 * p.x)",
    ],
    ids=["exists", "not_exists"],
)
def test_keyed_existence_is_rewritten_with_stock_answer(tables, query):
    spark = tables
    rows, plan = run(spark, lambda: spark.sql(query))
    stock_rows, stock_plan = run(spark, lambda: spark.sql(query), {rangejoin.ENABLED: "false"})
    assert canonical_rows(rows) == canonical_rows(stock_rows)
    assert rows, "the test data should give a non-empty result"
    explained = spark.sql(query)._jdf.queryExecution().toString()
    assert "RangeJoinMax" in explained and "RangeJoinMax" in plan, explained
    assert "RangeJoin" not in stock_plan, stock_plan
