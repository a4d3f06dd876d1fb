"""Range joins through SQL and the DataFrame API: planned as PiecewiseMergeJoin, and returning
exactly stock Spark's rows (the same query with spark.rangejoin.enabled=false)."""

import pytest
from pyspark.sql.functions import broadcast

from helpers import (
    KEYS,
    assert_rangejoin_matches_stock,
    canonical_rows,
    collect,
    join_operators,
    key_tables,
)

JOIN_TYPES = ["inner", "left", "right", "full", "left_semi", "left_anti"]
KEY_TYPES = list(KEYS)

SQL_JOIN = {
    "inner": "JOIN",
    "left": "LEFT OUTER JOIN",
    "right": "RIGHT OUTER JOIN",
    "full": "FULL OUTER JOIN",
    "left_semi": "LEFT SEMI JOIN",
    "left_anti": "LEFT ANTI JOIN",
}

# The other comparisons, with the left table's key on either side of them.
# (The DataFrame tests cover l.a < r.b.)
RANGE_PREDICATES = ["l.a <= r.b", "l.a > r.b", "r.b <= l.a"]


@pytest.mark.parametrize("key_type", KEY_TYPES)
@pytest.mark.parametrize("how", JOIN_TYPES)
def test_dataframe_join(spark, how, key_type):
    def query():
        left, right = key_tables(spark, key_type)
        condition = (left.a < right.b) & ((left.x + right.y) % 3 != 0)
        return left.join(right, condition, how)

    rows = assert_rangejoin_matches_stock(spark, query)
    assert rows, "the test data should give a non-empty result"


@pytest.mark.parametrize("how", JOIN_TYPES)
@pytest.mark.parametrize("predicate", RANGE_PREDICATES)
def test_sql_join(spark, how, predicate):
    # Spread the key types over the cases rather than multiply them.
    key_type = KEY_TYPES[(JOIN_TYPES.index(how) + RANGE_PREDICATES.index(predicate)) % len(KEY_TYPES)]

    def query():
        left, right = key_tables(spark, key_type)
        left.createOrReplaceTempView("l")
        right.createOrReplaceTempView("r")
        return spark.sql(
            f"SELECT * FROM l {SQL_JOIN[how]} r ON {predicate} AND l.id + r.id <> 105 AND (l.x + r.y) % 3 <> 0"
        )

    rows = assert_rangejoin_matches_stock(spark, query)
    assert rows, "the test data should give a non-empty result"


@pytest.mark.parametrize("key_type", ["double", "timestamp"])
@pytest.mark.parametrize("negated", [False, True], ids=["exists", "not_exists"])
def test_sql_correlated_exists(spark, key_type, negated):
    def query():
        left, right = key_tables(spark, key_type)
        left.createOrReplaceTempView("l")
        right.createOrReplaceTempView("r")
        not_ = "NOT " if negated else ""
        return spark.sql(
            f"SELECT * FROM l WHERE {not_}EXISTS (SELECT 1 FROM r WHERE l.a >= r.b AND r.y <> l.x)"
        )

    rows = assert_rangejoin_matches_stock(spark, query)
    assert rows, "the test data should give a non-empty result"


def test_known_answer(spark):
    """The demo query at a small size, against an answer computed in Python."""

    def query():
        spark.range(1, 101).toDF("v1").createOrReplaceTempView("t1")
        spark.range(1, 1001).toDF("v1").createOrReplaceTempView("t2")
        return spark.sql(
            "SELECT count(*) AS n FROM t1 JOIN t2 ON t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 2 = 0"
        )

    rows = assert_rangejoin_matches_stock(spark, query)
    expected = sum(1 for a in range(1, 101) for b in range(1, 1001) if a > b and (a + b) % 2 == 0)
    assert rows[0]["n"] == expected



def test_create_dataframe_needs_a_broadcast_hint(spark):
    """``spark.createDataFrame(list)`` has no size estimate, so Spark broadcasts neither side of an
    inner join and plans a CartesianProduct, which rangejoin leaves to Spark; a broadcast hint
    makes it a range join.
    """

    def tables():
        left = spark.createDataFrame([(i, i % 7) for i in range(30)], "a INT, x INT")
        right = spark.createDataFrame([(j, j % 5) for j in range(0, 60, 3)], "b INT, y INT")
        return left, right

    def unhinted():
        left, right = tables()
        return left.join(right, (left.a < right.b) & (left.x != right.y), "inner")

    def hinted(how):
        left, right = tables()
        return left.join(broadcast(right), (left.a < right.b) & (left.x != right.y), how)

    rows, plan = collect(spark, unhinted, enabled=True)
    assert join_operators(plan) == {"CartesianProduct"}, plan
    inner_rows = assert_rangejoin_matches_stock(spark, lambda: hinted("inner"))
    assert canonical_rows(inner_rows) == canonical_rows(rows)
    pairs = {(i, j) for i in range(30) for j in range(0, 60, 3) if i < j and i % 7 != j % 5}
    assert len(inner_rows) == len(pairs)
    left_rows = assert_rangejoin_matches_stock(spark, lambda: hinted("left"))
    unmatched = [i for i in range(30) if not any(a == i for a, _ in pairs)]
    assert len(left_rows) == len(pairs) + len(unmatched)
