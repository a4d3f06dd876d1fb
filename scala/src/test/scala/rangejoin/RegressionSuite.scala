package rangejoin

import scala.util.Try

import org.apache.spark.sql.{DataFrame, QueryTest, Row}
import org.apache.spark.sql.types.{IntegerType, StringType, StructField, StructType, TimestampType}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.catalyst.plans.ExistenceJoin
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.internal.SQLConf

import rangejoin.execution.{JoinHarness, PiecewiseMergeJoinExec}
import rangejoin.condition.RangeOp
/**
 * Bugs found and fixed, each kept as the minimal reproduction that found it. Each SQL
 * reproduction compares rangejoin with stock Spark (spark.rangejoin.enabled=false).
 */
class RegressionSuite extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper {

  private def rangeJoins(df: DataFrame): Seq[PiecewiseMergeJoinExec] =
    collect(df.queryExecution.executedPlan) { case j: PiecewiseMergeJoinExec => j }

  private def stock[T](body: => T): T = withConf(RangeJoinConf.Enabled -> "false")(body)

  /** The query's answer, or its error's message, with rangejoin and with stock Spark. */
  private def outcome(query: String): Either[String, Seq[String]] =
    Try(sql(query).collect().toSeq.map(_.toString).sorted).toEither.left.map(_.getMessage.linesIterator.next())

  /** The query is planned with a PiecewiseMergeJoin, yet answers (or fails) as stock Spark does. */
  private def assertAsStock(query: String): Unit = {
    assert(rangeJoins(sql(query)).nonEmpty, s"rangejoin does not plan\n$query")
    val expected = stock(outcome(query))
    val actual = outcome(query)
    assert(actual == expected, s"\n$query\nrangejoin: $actual\nstock:     $expected")
  }

  // JoinOutput binds the output, which ends with the existence flag, to left ++ right in its
  // constructor: INTERNAL_ERROR_ATTRIBUTE_NOT_FOUND before the first row, for either build side.
  test("existence joins (EXISTS in a disjunction) answer as stock Spark does") {
    assertAsStock("SELECT * FROM range(0, 10) l WHERE EXISTS (SELECT 1 FROM range(3, 6) r WHERE r.id > l.id) OR l.id = 7")
  }

  test("existence joins driven directly agree with a nested-loop join, either build side") {
    import JoinHarness._
    val ls = Seq(Rec(Some(1), 0), Rec(None, 1), Rec(Some(4), 2))
    val rs = Seq(Rec(Some(2), 100), Rec(Some(2), 101), Rec(None, 102))
    for (buildSide <- Seq(BuildLeft, BuildRight)) {
      val join = DriverJoin(ExistenceJoin(existsFlag), buildSide, RangeOp.Lt, residual = None, keyFails = false)
      val actual = Try(join.run(ls, rs, partitions = 1)).toEither.left.map(_.getMessage.linesIterator.next())
      assert(actual.exists(sameRows(_, join.expected(ls, rs))), s"$join: $actual")
    }
  }

  // outputPartitioning is UnknownPartitioning(streamed partitions) where the buffered side emits
  // rows of its own, but the RDD is the union of the streamed partitions and the buffered slices.
  // With one streamed partition it claims to satisfy AllTuples, so no exchange goes under a global
  // aggregate, which then runs once per partition: count(*) returns two rows.
  test("count(*) over an outer join whose buffered rows are emitted, one streamed partition") {
    assertAsStock("SELECT count(*) FROM range(0, 10, 1, 1) l FULL JOIN range(0, 5) r ON l.id < r.id")
    assertAsStock("SELECT /*+ BROADCAST(l) */ count(*) FROM range(0, 10) l LEFT JOIN range(0, 5, 1, 1) r ON l.id < r.id")
  }

  // A partition count the join claims must be the count its RDD has; where it cannot know (the
  // buffered side's own output comes in slices counted at run time) it claims 0, Spark's unknown.
  test("outputPartitioning never claims a partition count the join's RDD does not have") {
    withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false") {
      val queries = Seq(
        "SELECT * FROM range(0, 10, 1, 1) l FULL JOIN range(0, 5) r ON l.id < r.id",
        "SELECT /*+ BROADCAST(r) */ * FROM range(0, 10, 1, 3) l RIGHT JOIN range(0, 5) r ON l.id < r.id",
        "SELECT /*+ BROADCAST(r) */ * FROM range(0, 10, 1, 3) l LEFT JOIN range(0, 5) r ON l.id < r.id")
      val claims = queries.map { query =>
        val join = rangeJoins(sql(query)).headOption.getOrElse(fail(s"no PiecewiseMergeJoin for\n$query"))
        (query, join.outputPartitioning.numPartitions, join.execute().getNumPartitions)
      }
      assert(claims.forall { case (_, claimed, actual) => claimed == 0 || claimed == actual }, claims)
      assert(claims.last._2 == 3, "a streamed-side join keeps the streamed partitioning")
    }
  }

  // verboseStringWithOperatorId passes a JoinType and a BuildSide to
  // ExplainUtils.generateFieldString, which accepts only strings and collections.
  test("EXPLAIN FORMATTED describes the join instead of failing on its join type") {
    val explained = sql("EXPLAIN FORMATTED SELECT * FROM range(10) l JOIN range(5) r ON l.id < r.id").head().getString(0)
    assert(!explained.contains("Unsupported type for argument values"), explained)
    for (field <- Seq("Range predicate", "Join type", "Build side")) assert(explained.contains(field), explained)
  }

  // SortedRunFinder does not evaluate the streamed key when no buffered key is non-NULL. Right
  // when the streamed key is the comparison's second operand; but as its first operand Spark
  // evaluates it on every pair, NULL buffered key or not, and raises the error rangejoin skips.
  test("a failing streamed key that is the first operand raises even when every buffered key is NULL") {
    assertAsStock("""SELECT /*+ BROADCAST(r) */ * FROM (SELECT CAST(id - 1 AS INT) AS x FROM range(0, 3)) l
                    |JOIN range(0, 3) r ON 100 / l.x < IF(r.id < 100, NULL, r.id)""".stripMargin)
  }

  // A semi join stops at the first passing pair. Spark tries the buffered rows in broadcast order,
  // rangejoin in key order, so a residual that fails on a pair Spark never reaches fails the query
  // with rangejoin only. (Stricter than Spark, unlike the other orders rangejoin changes.)
  test("a semi join does not evaluate its residual on pairs stock Spark never reaches") {
    assertAsStock("""SELECT * FROM range(1, 3) l LEFT SEMI JOIN (SELECT 15 - id AS b FROM range(5, 11, 5, 1)) r
                    |ON l.id < r.b AND 10 / (r.b - l.id - 4) > 0""".stripMargin)
  }

  // SortedBroadcastExec's mode was bound at planning time against the logical output (key
  // nullable), the join's requirement later against the physical child (key proved non-null by a
  // Filter): the modes differed, Spark put a broadcast exchange over SortedBroadcastExec, and the
  // query failed. Adaptive execution re-plans over query stages, where the two part ways.
  test("a buffered key proved non-null below the join does not break the sorted broadcast") {
    withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "true") {
      withTempView("nl", "nr") {
        // The filter Spark infers (isnotnull(r.k)) stays a physical Filter below the shuffle, so
        // the buffered child's output has the key non-null where the logical plan's has not.
        val schema = StructType(Seq(
          StructField("id", IntegerType), StructField("k", StringType), StructField("v", IntegerType)))
        def table(rows: Row*) = spark.createDataFrame(java.util.Arrays.asList(rows: _*), schema)
        table(Row(0, "a", 1), Row(1, "c", null)).createOrReplaceTempView("nl")
        table(Row(10, "b", 2), Row(11, null, 3), Row(12, "d", null)).repartition(2)
          .createOrReplaceTempView("nr")
        assertAsStock("SELECT l.id, r.id FROM nl l LEFT JOIN nr r ON r.k >= l.k AND (l.v < r.v OR r.v IS NULL)")
      }
    }
  }

  /** The query answers (or fails) as stock Spark does, whichever way it is planned. */
  private def assertOutcomeAsStock(query: String): Unit = {
    val expected = stock(outcome(query))
    val actual = outcome(query)
    assert(actual == expected, s"\n$query\nrangejoin: $actual\nstock:     $expected")
  }

  // Issue 9.1: the dynamic filter's bound 0.0 was pushed to the scan as it was, and Parquet's
  // statistics order -0.0 below 0.0, so a row group of -0.0 was skipped (stock 3, rangejoin 1).
  test("-0.0 in a Parquet or ORC double column passes a pushed bound of 0.0") {
    for (format <- Seq("parquet", "orc")) {
      withTempPath { dir =>
        sql("SELECT CAST('-0.0' AS DOUBLE) AS d FROM range(3)").write.format(format).save(dir.getPath)
        spark.read.format(format).load(dir.getPath).createOrReplaceTempView("p")
        sql("SELECT * FROM VALUES (0.0d), (1.0d) t(b)").createOrReplaceTempView("bz")
        assertAsStock("SELECT count(*) FROM p JOIN bz ON p.d >= bz.b")
        assertAsStock("SELECT * FROM p WHERE EXISTS (SELECT 1 FROM bz WHERE p.d >= bz.b)")
        assertAsStock("SELECT * FROM p LEFT SEMI JOIN bz ON bz.b <= p.d")
      }
    }
  }

  // Issue 9.2: a bound with more precision than the file's timestamps: a strict `t < b` pushed
  // to TIMESTAMP_MILLIS statistics truncates b to the same millisecond as t, and skipped every
  // row group; the right join then padded its matched buffered rows with NULLs.
  test("TIMESTAMP_MILLIS values pass a strict bound with finer precision") {
    withSQLConf("spark.sql.parquet.outputTimestampType" -> "TIMESTAMP_MILLIS") {
      withTempPath { dir =>
        sql("SELECT id, timestamp'2020-01-01 00:00:00.001' AS t FROM range(5)").write.parquet(dir.getPath)
        spark.read.parquet(dir.getPath).createOrReplaceTempView("tm")
        // Two rows: the optimizer folds a one-row constant side into a filter, and no join remains.
        sql("SELECT * FROM VALUES (timestamp'2020-01-01 00:00:00.0015'), (timestamp'2020-01-01 00:00:00.0015') t(b)")
          .createOrReplaceTempView("tb")
        assertAsStock("SELECT count(*) FROM tm JOIN tb ON tm.t < tb.b")
        assertAsStock("SELECT * FROM tm WHERE EXISTS (SELECT 1 FROM tb WHERE tm.t < tb.b)")
        assertAsStock("SELECT * FROM tm LEFT SEMI JOIN tb ON tm.t < tb.b")
        assertAsStock("SELECT /*+ RANGE_JOIN(tb) */ tm.id, tb.b FROM tm RIGHT JOIN tb ON tm.t < tb.b")
      }
    }
  }

  // Issue 9.3: the bound was pushed below operators that must see every row: a projection that
  // numbers rows or draws random values, a random filter, and a filter that raises.
  test("the pushed bound does not cross non-deterministic or failing operators") {
    withTempPath { dir =>
      spark.range(0, 20000, 1, 1).selectExpr("CAST(id AS INT) AS v")
        .write.option("parquet.block.size", 4096).parquet(dir.getPath)
      spark.read.parquet(dir.getPath).createOrReplaceTempView("pv")
      sql("SELECT * FROM VALUES (15000), (16000) t(y)").createOrReplaceTempView("bb")
      val below = Seq(
        "SELECT v, monotonically_increasing_id() AS mid FROM pv",
        "SELECT v, rand(7) AS r FROM pv",
        "SELECT v FROM pv WHERE rand(3) < 0.5",
        "SELECT v FROM pv WHERE 10 / (v - 3) > -100")
      for (q <- below) {
        assertAsStock(s"SELECT * FROM ($q) q JOIN bb ON q.v > bb.y")
        assertAsStock(s"SELECT * FROM ($q) q WHERE EXISTS (SELECT 1 FROM bb WHERE q.v > bb.y)")
      }
      // A filter that cannot fail is crossed, and the scan skips row groups.
      val safe = "SELECT * FROM (SELECT v, v + 0.5D AS w FROM pv WHERE v <> 7) q JOIN bb ON q.v > bb.y"
      assertAsStock(safe)
      val df = sql(safe)
      df.collect()
      val scanned = collect(df.queryExecution.executedPlan) {
        case s: org.apache.spark.sql.execution.FileSourceScanExec => s.metrics("numOutputRows").value
      }.sum
      assert(scanned > 0 && scanned < 20000, scanned)
    }
  }

  // Issue 9.4: CannotFail took date-to-timestamp casts (and, without ANSI, every cast) as unable
  // to fail, so the fast path evaluated an overflowing key on every subquery row.
  test("a key cast that overflows is not evaluated where stock Spark would not") {
    for (ansi <- Seq("true", "false")) {
      withSQLConf(SQLConf.ANSI_ENABLED.key -> ansi) {
        // NULLs the optimizer cannot see: a NULL literal would fold the condition away.
        spark.createDataFrame(java.util.Arrays.asList(Row(null), Row(null), Row(null)),
          StructType(Seq(StructField("t", TimestampType)))).createOrReplaceTempView("tsn")
        sql("SELECT date_add(date'2020-01-01', 200000000 + CAST(id AS INT)) AS d FROM range(2)")
          .createOrReplaceTempView("xd")
        assertAsStock("SELECT * FROM tsn WHERE NOT EXISTS (SELECT 1 FROM xd WHERE tsn.t >= xd.d)")
        assertAsStock("SELECT * FROM tsn WHERE EXISTS (SELECT 1 FROM xd WHERE tsn.t >= xd.d)")
      }
    }
  }

  // A range conjunct after one that may fail drove the join, so the earlier conjunct was
  // evaluated on the candidates only, and the error Spark raises on another pair was lost.
  test("a range conjunct after a conjunct that may fail does not drive the join") {
    val query = "SELECT * FROM range(0, 5) l JOIN range(0, 5) r ON 10 / (l.id - r.id) > 0 AND l.id < r.id"
    assert(rangeJoins(sql(query)).isEmpty)
    assertOutcomeAsStock(query)
    assertAsStock("SELECT * FROM range(0, 5) l JOIN range(0, 5) r ON l.id <> r.id AND l.id < r.id")
  }

  // Issue 9.5: the buffered side was collected with no limit, and no timeout. Spark times out a
  // broadcast only without adaptive execution; rangejoin does as the plan it replaces would.
  test("the sorted broadcast times out where Spark's broadcast does") {
    // One row, 1.5 s to compute: past the 1 s timeout, whatever the machine's speed.
    spark.udf.register("slow_id", (x: Long) => { Thread.sleep(1500); x })
    val query = "SELECT /*+ BROADCAST(r) */ * FROM range(10) l " +
      "JOIN (SELECT slow_id(id) + 3 AS k FROM range(0, 1, 1, 1)) r ON l.id < r.k"
    for (aqe <- Seq("false", "true")) {
      withSQLConf(SQLConf.BROADCAST_TIMEOUT.key -> "1", SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe) {
        assert(rangeJoins(sql(query)).nonEmpty)
        val expected = stock(outcome(query))
        val actual = outcome(query)
        assert(expected.isLeft == (aqe == "false") && actual == expected, s"AQE $aqe\nrangejoin: $actual\nstock:     $expected")
      }
    }
  }
}
