"""rangejoin's configuration keys, set at run time: what each one changes in the plan, that the
answer stays stock Spark's, and that a bad value fails planning with an error naming the key and
the values it accepts."""

import pytest
from pyspark.errors import IllegalArgumentException

import rangejoin
from helpers import (
    BNLJ,
    PMJ,
    assert_answer_is_stock,
    canonical_rows,
    join_operators,
    range_join_line,
    run,
    sql_conf,
)

AUTO_BROADCAST = "spark.sql.autoBroadcastJoinThreshold"
# What the sizes that may be negative accept, as the extension's errors say it.
SIGNED_SIZE_ACCEPTS = ("a size in bytes, with an optional unit (10485760, 10m, 64MB, 1g), or a "
                       "negative number (-1)")


@pytest.fixture(scope="module")
def tables(spark):
    """``small`` (a = 0..49, 400 bytes by Spark's estimate), ``big`` (b = 0..499, 4,000 bytes)
    and ``probe`` (p = 20..29)."""
    spark.range(0, 50).toDF("a").createOrReplaceTempView("small")
    spark.range(0, 500).toDF("b").createOrReplaceTempView("big")
    spark.range(20, 30).toDF("p").createOrReplaceTempView("probe")
    yield spark


def sql(spark, text):
    return lambda: spark.sql(text)


INNER = "SELECT * FROM small JOIN big ON small.a < big.b AND (small.a + big.b) % 7 = 0"
# A left outer join would rather buffer its right side (big), which it does not preserve; a
# threshold that only small is under makes rangejoin buffer small instead.
LEFT_OUTER = "SELECT * FROM small LEFT JOIN big ON small.a < big.b AND (small.a + big.b) % 7 = 0"


def expect_invalid(spark, make_df, key, value, accepted):
    with sql_conf(spark, {key: value}):
        with pytest.raises(IllegalArgumentException) as error:
            make_df().collect()
    message = str(error.value)
    assert f"Invalid value for {key}: '{value}'. Accepted values: {accepted}" in message, message


# --- spark.rangejoin.enabled ------------------------------------------------------------------

def test_enabled_false_leaves_the_join_to_spark(tables):
    rows, plan = assert_answer_is_stock(tables, sql(tables, INNER), {rangejoin.ENABLED: "true"})
    assert PMJ in plan, plan
    _, off_plan = run(tables, sql(tables, INNER), {rangejoin.ENABLED: "FALSE"})
    assert join_operators(off_plan) == {BNLJ}, off_plan
    assert len(rows) == sum(1 for a in range(50) for b in range(500) if a < b and (a + b) % 7 == 0)


def test_enabled_bad_value(tables):
    expect_invalid(tables, sql(tables, INNER), rangejoin.ENABLED, "yes", "true or false")


# --- spark.rangejoin.broadcastThreshold -------------------------------------------------------

@pytest.mark.parametrize(
    "threshold, expected",
    [
        # Neither side: Spark's last resort for a left outer join (a BNLJ broadcasting the right
        # side whatever its size), and rangejoin buffers that side.
        ("100", "BuildRight"),
        ("1k", "BuildLeft"),  # small only
        ("10KB", "BuildRight"),  # both: the side the left outer join does not preserve
        ("-1", "BuildRight"),  # hinted sides only: the last resort again
    ],
)
def test_broadcast_threshold_decides_what_can_be_buffered(tables, threshold, expected):
    conf = {rangejoin.BROADCAST_THRESHOLD: threshold}
    _, plan = assert_answer_is_stock(tables, sql(tables, LEFT_OUTER), conf)
    assert range_join_line(plan).startswith(f"{PMJ} LeftOuter, {expected},"), plan


def test_broadcast_threshold_unset_follows_spark(tables):
    """Unset, rangejoin buffers what Spark would broadcast: nothing, with Spark's threshold at -1
    (Spark then plans a cartesian product); rangejoin's own threshold overrides Spark's."""
    _, plan = assert_answer_is_stock(tables, sql(tables, INNER), {AUTO_BROADCAST: "-1"})
    assert join_operators(plan) == {"CartesianProduct"}, plan
    conf = {AUTO_BROADCAST: "-1", rangejoin.BROADCAST_THRESHOLD: "10m"}
    _, plan = assert_answer_is_stock(tables, sql(tables, INNER), conf)
    assert range_join_line(plan).startswith(f"{PMJ} Inner, BuildLeft,"), plan
    conf = {AUTO_BROADCAST: "1k", rangejoin.BROADCAST_THRESHOLD: "10k"}
    _, plan = assert_answer_is_stock(tables, sql(tables, LEFT_OUTER), conf)
    assert range_join_line(plan).startswith(f"{PMJ} LeftOuter, BuildRight,"), plan


@pytest.mark.parametrize("value", ["lots", "1.5g", "10 m", "-1m"])
def test_broadcast_threshold_bad_value(tables, value):
    expect_invalid(
        tables, sql(tables, INNER), rangejoin.BROADCAST_THRESHOLD, value,
        SIGNED_SIZE_ACCEPTS,
    )


# --- spark.rangejoin.existenceFastPath.enabled ------------------------------------------------

# name: (query, the subquery side's extreme key that decides it, the rows of small it returns)
EXISTENCE_QUERIES = {
    "not_exists": (
        "SELECT * FROM small WHERE NOT EXISTS (SELECT 1 FROM probe WHERE small.a < probe.p)",
        "max", [a for a in range(50) if not any(a < p for p in range(20, 30))],
    ),
    "exists_or": (
        "SELECT * FROM small WHERE EXISTS (SELECT 1 FROM probe WHERE small.a > probe.p) "
        "OR small.a = 0",
        "min", [a for a in range(50) if any(a > p for p in range(20, 30)) or a == 0],
    ),
    "left_semi": (
        "SELECT * FROM small LEFT SEMI JOIN probe ON small.a <= probe.p",
        "max", [a for a in range(50) if any(a <= p for p in range(20, 30))],
    ),
    "left_anti": (
        "SELECT * FROM small LEFT ANTI JOIN probe ON probe.p < small.a",
        "min", [a for a in range(50) if not any(p < a for p in range(20, 30))],
    ),
}


# With the dynamic filter on, semi and anti joins on the fast path run as that filter alone;
# off, through the join loop with the one buffered row.
@pytest.mark.parametrize("dynamic_filter", ["true", "false"])
@pytest.mark.parametrize("name", list(EXISTENCE_QUERIES))
def test_existence_fast_path_buffers_the_extreme_row(tables, name, dynamic_filter):
    query, extreme, expected = EXISTENCE_QUERIES[name]
    conf = {rangejoin.DYNAMIC_FILTER: dynamic_filter}
    rows, plan = assert_answer_is_stock(tables, sql(tables, query), conf)
    assert f"SortedBroadcast {extreme}(p#" in plan, plan
    assert sorted(row.a for row in rows) == expected
    # Off, the whole side is sorted and broadcast.
    conf[rangejoin.EXISTENCE_FAST_PATH] = "false"
    _, off_plan = assert_answer_is_stock(tables, sql(tables, query), conf)
    assert "SortedBroadcast p#" in off_plan and f"{extreme}(" not in off_plan, off_plan


def test_existence_fast_path_has_no_size_limit(tables):
    """The extreme row is found where the rows are, so no side needs to fit a broadcast: with
    nothing under the thresholds, the fast path still plans the join; switched off, rangejoin
    buffers every row of the side Spark's last resort (a BNLJ) broadcasts whatever its size."""
    query, extreme, _ = EXISTENCE_QUERIES["not_exists"]
    conf = {AUTO_BROADCAST: "-1"}
    _, plan = assert_answer_is_stock(tables, sql(tables, query), conf)
    assert f"SortedBroadcast {extreme}(p#" in plan, plan
    conf[rangejoin.EXISTENCE_FAST_PATH] = "false"
    _, plan = assert_answer_is_stock(tables, sql(tables, query), conf)
    assert "SortedBroadcast p#" in plan and f"{extreme}(" not in plan, plan
    assert join_operators(plan) == {PMJ}, plan


def test_existence_fast_path_bad_value(tables):
    # The key is read when a join the fast path could take is planned.
    expect_invalid(
        tables, sql(tables, EXISTENCE_QUERIES["not_exists"][0]), rangejoin.EXISTENCE_FAST_PATH,
        "on", "true or false",
    )


# --- spark.rangejoin.dynamicFilter.enabled ----------------------------------------------------

@pytest.fixture(scope="module")
def files(spark, tmp_path_factory):
    """Parquet tables: ``events`` (k = 0..19,999, in 4 files of 5,000 consecutive keys) and
    ``windows`` (k = 9,000..9,099, step 3), whose key range covers a small part of events'."""
    root = tmp_path_factory.mktemp("dynamic_filter")
    events = spark.range(0, 20000, numPartitions=4).selectExpr("id AS k", "id % 13 AS x")
    events.write.parquet(str(root / "events"))
    windows = spark.range(9000, 9100, 3, numPartitions=1).selectExpr("id AS w", "id % 5 AS y")
    windows.write.parquet(str(root / "windows"))
    spark.read.parquet(str(root / "events")).createOrReplaceTempView("events")
    spark.read.parquet(str(root / "windows")).createOrReplaceTempView("windows")
    yield spark


EVENTS = [(k, k % 13) for k in range(20000)]
WINDOWS = [(w, w % 5) for w in range(9000, 9100, 3)]


def _pairs(condition):
    return [(k, w) for k, x in EVENTS for w, y in WINDOWS if condition(k, x, w, y)]


def _expected_rows(name):
    """The number of rows each query below returns, computed in Python."""
    if name == "inner":
        return len(_pairs(lambda k, x, w, y: w < k < w + 40 and x != y))
    if name == "left_semi":
        return len({k for k, _ in _pairs(lambda k, x, w, y: w - 5 <= k <= w)})
    if name == "right_outer":
        matches = _pairs(lambda k, x, w, y: w <= k < w + 2 and x != 0)
        return len(matches) + sum(1 for w, _ in WINDOWS if all(m[1] != w for m in matches))
    matches = _pairs(lambda k, x, w, y: w <= k < w + 2)
    return len(matches) + len(EVENTS) - len({k for k, _ in matches})


# Join types where a streamed row with no match outputs nothing, so the filter may apply, and
# one where every streamed row is output (left outer), so it must not. The RANGE_JOIN hint makes
# windows the buffered side, events the streamed one.
DYNAMIC_FILTER_QUERIES = {
    "inner": "SELECT /*+ RANGE_JOIN(windows) */ * FROM events JOIN windows "
             "ON events.k > windows.w AND events.k < windows.w + 40 AND events.x <> windows.y",
    "left_semi": "SELECT /*+ RANGE_JOIN(windows) */ * FROM events LEFT SEMI JOIN windows "
                 "ON events.k <= windows.w AND events.k >= windows.w - 5",
    "right_outer": "SELECT /*+ RANGE_JOIN(windows) */ * FROM events RIGHT JOIN windows "
                   "ON events.k >= windows.w AND events.k < windows.w + 2 AND events.x <> 0",
    "left_outer": "SELECT /*+ RANGE_JOIN(windows) */ * FROM events LEFT JOIN windows "
                  "ON events.k >= windows.w AND events.k < windows.w + 2",
}


@pytest.mark.parametrize("name", list(DYNAMIC_FILTER_QUERIES))
def test_dynamic_filter_keeps_the_answer(files, name):
    make_df = sql(files, DYNAMIC_FILTER_QUERIES[name])
    rows, plan = assert_answer_is_stock(files, make_df, {rangejoin.DYNAMIC_FILTER: "true"})
    assert "BuildRight" in range_join_line(plan), plan
    assert len(rows) == _expected_rows(name)
    off_rows, off_plan = run(files, make_df, {rangejoin.DYNAMIC_FILTER: "false"})
    assert "BuildRight" in range_join_line(off_plan), off_plan
    assert canonical_rows(off_rows) == canonical_rows(rows)


def test_dynamic_filter_bad_value(files):
    expect_invalid(
        files, sql(files, DYNAMIC_FILTER_QUERIES["inner"]), rangejoin.DYNAMIC_FILTER, "maybe",
        "true or false",
    )


# --- spark.rangejoin.sideSwitch.* --------------------------------------------------------------

SWITCH = "RangeJoinSideSwitch"
SIDE_SWITCH_QUERY = "SELECT * FROM small JOIN big ON small.a > big.b AND (small.a + big.b) % 3 = 0"


def test_side_switch_keys_decide_the_plan_not_the_answer(tables):
    make_df = sql(tables, "SELECT * FROM big JOIN small ON big.b < small.a AND (small.a + big.b) % 3 = 0")
    # Below the default minimum size (8m): the join as planned.
    _, plan = assert_answer_is_stock(tables, make_df, {rangejoin.BROADCAST_THRESHOLD: "1k"})
    assert SWITCH not in plan, plan
    # Every size: the switch is planned; which join ran is its metric, the rows are stock Spark's.
    rows, plan = assert_answer_is_stock(
        tables, make_df, {rangejoin.BROADCAST_THRESHOLD: "10k", rangejoin.SIDE_SWITCH_MIN_SIZE: "0"})
    assert SWITCH in plan and plan.count(PMJ) == 2, plan
    assert len(rows) == sum(1 for a in range(50) for b in range(500) if b < a and (a + b) % 3 == 0)
    _, plan = run(tables, make_df, {rangejoin.BROADCAST_THRESHOLD: "10k",
                                    rangejoin.SIDE_SWITCH_MIN_SIZE: "0", rangejoin.SIDE_SWITCH: "false"})
    assert SWITCH not in plan and plan.count(PMJ) == 1, plan


@pytest.mark.parametrize(
    "key, value, accepted",
    [
        (rangejoin.SIDE_SWITCH, "sometimes", "true or false"),
        (rangejoin.SIDE_SWITCH_MIN_SIZE, "big", "a size in bytes of 0 or more"),
        (rangejoin.SIDE_SWITCH_MAX_RATIO, "-1", "a number of 0 or more"),
    ],
)
def test_side_switch_bad_values(tables, key, value, accepted):
    conf = {rangejoin.BROADCAST_THRESHOLD: "10k", rangejoin.SIDE_SWITCH_MIN_SIZE: "0"}
    with sql_conf(tables, conf):
        expect_invalid(tables, sql(tables, SIDE_SWITCH_QUERY), key, value, accepted)


# --- spark.rangejoin.shuffle.maxPartitionSize -------------------------------------------------

KEYED = ("SELECT * FROM small JOIN big ON small.a % 5 = big.b % 5 AND small.a < big.b "
         "AND (small.a + big.b) % 7 = 0")


def test_shuffle_max_partition_size_decides_the_shuffled_join(tables):
    """With equality keys and no side to broadcast, the smaller side is sorted per shuffle
    partition where its estimated size per partition fits; ``-1`` leaves the join to Spark's
    sort-merge join."""
    no_broadcast = {AUTO_BROADCAST: "-1", rangejoin.BROADCAST_THRESHOLD: "-1"}
    _, plan = assert_answer_is_stock(tables, sql(tables, KEYED), no_broadcast)
    assert "ShuffledPiecewiseMergeJoin Inner, BuildLeft, SortedRun per key" in plan, plan
    for size in ("-1", "10"):  # off; a partition of small is larger than 10 bytes
        conf = {**no_broadcast, rangejoin.SHUFFLE_MAX_PARTITION_SIZE: size}
        _, plan = assert_answer_is_stock(tables, sql(tables, KEYED), conf)
        assert join_operators(plan) == {"SortMergeJoin"}, plan


def test_shuffle_max_partition_size_bad_value(tables):
    with sql_conf(tables, {AUTO_BROADCAST: "-1", rangejoin.BROADCAST_THRESHOLD: "-1"}):
        expect_invalid(tables, sql(tables, KEYED), rangejoin.SHUFFLE_MAX_PARTITION_SIZE, "lots",
                       SIGNED_SIZE_ACCEPTS)
