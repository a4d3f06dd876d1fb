package rangejoin

import scala.util.Try

import org.apache.spark.sql.{DataFrame, QueryTest, Row}
import org.apache.spark.sql.types.{IntegerType, StringType, StructField, StructType}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.catalyst.plans.ExistenceJoin
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.internal.SQLConf

import rangejoin.execution.{JoinHarness, PiecewiseMergeJoinExec, RangeOp}

/**
 * Bugs found and fixed, each kept as the minimal reproduction that found it. Each SQL
 * reproduction compares rangejoin with stock Spark (spark.rangejoin.enabled=false).
 */
class RegressionSuite extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper {

  private def rangeJoins(df: DataFrame): Seq[PiecewiseMergeJoinExec] =
    collect(df.queryExecution.executedPlan) { case j: PiecewiseMergeJoinExec => j }

  private def stock[T](body: => T): T = withSQLConf(RangeJoinConf.Enabled -> "false")(body)

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
}
