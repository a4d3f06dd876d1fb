"""rangejoin in two minutes: the same range join with stock Spark and with rangejoin.

Run it with ``make demo`` (which builds and installs the wheel first), or from the repository's
root with any Python that has the spark-rangejoin wheel installed: ``python -m bench.demo``.

It starts an embedded local[2] Spark set up by ``rangejoin.configure``, joins a 1,000-row table
with a 1,000,000-row table on an inequality plus a residual condition, once with rangejoin switched
off (``spark.rangejoin.enabled=false``: Spark plans a BroadcastNestedLoopJoin) and once with it on
(a PiecewiseMergeJoin), and compares the operators, the answers and the wall times. It exits with
status 1 if the answers differ or a plan does not use the expected join operator.
"""

import sys
import time

from pyspark.sql import SparkSession

import rangejoin
from bench.local_spark import executed_plan, local_spark

T1_ROWS = 1_000
T2_ROWS = 1_000_000
QUERY = "SELECT count(*) FROM t1 JOIN t2 ON t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 2 = 0"
# For each t1.v1 = a, the t2.v1 below a that have a's parity: (a - 1) // 2 of them.
EXPECTED = sum((a - 1) // 2 for a in range(1, T1_ROWS + 1))

PMJ = "PiecewiseMergeJoin"
BNLJ = "BroadcastNestedLoopJoin"
JOIN_OPERATORS = (PMJ, BNLJ, "CartesianProduct", "BroadcastHashJoin", "SortMergeJoin",
                  "ShuffledHashJoin")

def join_operator(df) -> str:
    """The join operator in the final executed plan of ``df`` (call it after an action)."""
    plan = executed_plan(df)
    found = [op for op in JOIN_OPERATORS if op in plan]
    return ", ".join(found) if found else "no join operator found"


def run(spark: SparkSession, enabled: bool):
    """Runs QUERY with rangejoin on or off: (answer, join operator, wall seconds)."""
    spark.conf.set(rangejoin.ENABLED, "true" if enabled else "false")
    df = spark.sql(QUERY)  # a new DataFrame, planned with the setting above
    start = time.perf_counter()
    answer = df.collect()[0][0]
    seconds = time.perf_counter() - start
    return answer, join_operator(df), seconds


def main() -> int:
    print(f"rangejoin {rangejoin.__version__} demo: starting Spark (local[2]) ...", flush=True)
    with local_spark("rangejoin-demo") as spark:
        return demo(spark)


def demo(spark: SparkSession) -> int:
    spark.range(1, T1_ROWS + 1).toDF("v1").createOrReplaceTempView("t1")
    spark.range(1, T2_ROWS + 1).toDF("v1").createOrReplaceTempView("t2")
    print(f"Spark {spark.version}, jar {rangejoin.jar_path()}")
    print()
    print(f"  t1: {T1_ROWS:,} rows, v1 = 1..{T1_ROWS:,}")
    print(f"  t2: {T2_ROWS:,} rows, v1 = 1..{T2_ROWS:,}")
    print(f"  query: {QUERY}")
    print()
    print("Warm-up: one untimed run each way first, so that JVM start-up and JIT compilation")
    print("do not count in the times below ...", flush=True)
    run(spark, enabled=False)
    run(spark, enabled=True)
    print()

    cases = [
        ("stock Spark", "spark.rangejoin.enabled=false", False, BNLJ),
        ("rangejoin", "spark.rangejoin.enabled=true", True, PMJ),
    ]
    results = {}
    ok = True
    for name, setting, enabled, expected_operator in cases:
        answer, operator, seconds = run(spark, enabled)
        results[name] = (answer, seconds)
        print(f"{name} ({setting})")
        print(f"  join operator: {operator}")
        print(f"  answer:        {answer:,}")
        print(f"  wall time:     {seconds:.3f} s", flush=True)
        if operator != expected_operator:
            print(f"  ERROR: expected the join operator {expected_operator}, got {operator}")
            ok = False
    spark.conf.unset(rangejoin.ENABLED)
    print()

    (stock_answer, stock_seconds), (rj_answer, rj_seconds) = results["stock Spark"], results["rangejoin"]
    if stock_answer == rj_answer:
        print(f"Answers equal: yes, {rj_answer:,} both ways (and {EXPECTED:,} is the answer computed in Python).")
    else:
        print(f"ERROR: answers differ: stock Spark {stock_answer:,}, rangejoin {rj_answer:,}")
        ok = False
    if rj_answer != EXPECTED:
        print(f"ERROR: the right answer is {EXPECTED:,}")
        ok = False
    print(f"Speed-up: {stock_seconds / rj_seconds:.1f}x "
          f"(stock Spark {stock_seconds:.3f} s / rangejoin {rj_seconds:.3f} s; one timed run each)")
    if not ok:
        print("FAILED: see the errors above.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
