package rangejoin.features

import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, WholeStageCodegenExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.differential.Tier
import rangejoin.execution.PiecewiseMergeJoinExec
/**
 * The existence fast path and the dynamic filter on the shapes they change: answers as stock
 * Spark's, on sides with NULLs, NaN, -0.0 and no rows; plans as described.
 */
class FastPathSuite extends RangeJoinQueries {

  override def beforeAll(): Unit = {
    super.beforeAll()
    sql("""CREATE OR REPLACE TEMP VIEW d(k) AS VALUES (1.0D), (CAST('NaN' AS DOUBLE)), (-0.0D),
          |  (0.0D), (NULL), (5.5D), (-3.0D)""".stripMargin)
    sql("CREATE OR REPLACE TEMP VIEW only_nan(k) AS VALUES (CAST('NaN' AS DOUBLE)), (NULL)")
    sql("CREATE OR REPLACE TEMP VIEW nothing(k) AS SELECT k FROM d WHERE k > 100")
    sql("CREATE OR REPLACE TEMP VIEW nulls(k) AS SELECT CAST(NULL AS DOUBLE) FROM range(3)")
  }

  private val sides = Seq("d", "only_nan", "nothing", "nulls")
  private val ops = Seq("<", "<=", ">", ">=")

  test("EXISTS, NOT EXISTS and LEFT SEMI/ANTI with no residual read one extreme row") {
    // The full tier a seeded tenth of the combinations (make test-all: every one).
    val combinations = for (l <- Seq("d", "only_nan", "nulls"); r <- sides; op <- ops) yield (l, r, op)
    for ((l, r, op) <- Tier.sample(combinations, slice = 12, full = Tier.tenth(combinations.size))) {
      val queries = Seq(
        s"SELECT * FROM $l a WHERE EXISTS (SELECT 1 FROM $r b WHERE a.k $op b.k)",
        s"SELECT * FROM $l a WHERE NOT EXISTS (SELECT 1 FROM $r b WHERE b.k $op a.k)",
        s"SELECT * FROM $l a WHERE EXISTS (SELECT 1 FROM $r b WHERE a.k $op b.k) OR a.k = 1",
        s"SELECT * FROM $l a LEFT SEMI JOIN $r b ON a.k + 1 $op b.k")
      for (query <- queries) {
        val df = assertAsStock(query)
        val broadcasts = sortedBroadcasts(df)
        assert(broadcasts.forall(_.extreme.isDefined), query)
        // The optimizer removes a join with a side it can prove empty; every other uses the path.
        val provablyEmpty = Set("nothing", "nulls")
        if (!provablyEmpty(l) && !provablyEmpty(r)) assert(broadcasts.size == 1, query)
      }
    }
  }

  test("a residual, or a key that could fail, keeps every buffered row") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      val residual = assertAsStock(
        "SELECT * FROM d l WHERE EXISTS (SELECT 1 FROM d r WHERE l.k < r.k AND l.k + r.k <> 5.5D)")
      assert(sortedBroadcasts(residual).map(_.extreme) == Seq(None))
      val failing = assertAsStock(
        "SELECT * FROM range(10) l WHERE EXISTS (SELECT 1 FROM range(5) r WHERE l.id < r.id * 2)")
      assert(sortedBroadcasts(failing).map(_.extreme) == Seq(None))
    }
  }

  test("the dynamic filter keeps every join type's answer, whichever side streams") {
    // Each side against d (every kind of value), each operator and join type, either side buffered.
    val hows = Seq("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN")
    val combinations = for (other <- sides; (l, r) <- Seq(("d", other), (other, "d")); op <- ops; how <- hows)
      yield (l, r, op, how)
    for ((l, r, op, how) <- Tier.sample(combinations, slice = 24, full = Tier.tenth(combinations.size))) {
      val hint = if ((l + op + how).hashCode % 2 == 0) "/*+ BROADCAST(a) */" else "/*+ BROADCAST(b) */"
      assertAsStock(s"SELECT $hint * FROM $l a $how $r b ON a.k $op b.k AND a.k IS DISTINCT FROM 7")
    }
  }

  test("the dynamic filter runs inside the streamed side's generated code and reaches a Parquet scan") {
    withTempPath { dir =>
      val path = dir.getCanonicalPath
      spark.range(0, 100000, 1, 1).toDF("v").write.option("parquet.block.size", 16384).parquet(path)
      spark.read.parquet(path).createOrReplaceTempView("pq")
      val query = "SELECT count(*) FROM pq JOIN range(0, 50) r ON pq.v < r.id"
      val df = assertAsStock(query)
      val Seq(filter) = dynamicFilters(df)
      // Generated with the join, in one stage with the scan.
      assert(collect(df.queryExecution.executedPlan) {
        case stage: WholeStageCodegenExec if stage.child.exists(_.isInstanceOf[PiecewiseMergeJoinExec]) &&
          stage.child.exists(_.isInstanceOf[ColumnarToRowExec]) => stage
      }.nonEmpty, df.queryExecution.executedPlan)
      assert(filter.metrics("numStreamedRowsSkipped").value > 0)
      // Row groups whose statistics exclude v < 49 are not read: far fewer rows reach the filter.
      assert(filter.metrics("numStreamedRowsSkipped").value < 100000 - 49,
        "the scan read every row group")
      // The planned scan's metric reports what the pushed-down scan read.
      val scanned = collect(df.queryExecution.executedPlan) {
        case s: FileSourceScanExec => s.metrics("numOutputRows").value
      }.sum
      assert(scanned > 0 && scanned < 100000, scanned)
      withSQLConf(SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false") { assertAsStock(query) }
      withSQLConf("spark.rangejoin.dynamicFilter.enabled" -> "false") {
        val off = assertAsStock(query)
        assert(rangeJoins(off).nonEmpty && dynamicFilters(off).isEmpty)
      }
    }
  }

  test("the existence fast path runs as its filter alone, in generated code, EXPLAIN CODEGEN included") {
    // The semi join's answer is its filter (l.id < max(r.id)): the join's stage is that filter.
    val query = "SELECT * FROM range(0, 100) l WHERE EXISTS (SELECT 1 FROM range(0, 10) r WHERE l.id < r.id)"
    // Without adaptive execution, EXPLAIN CODEGEN shows the stages before the query has run: the
    // filter's code is generated with its bound, read from the broadcast (as BroadcastHashJoin's
    // code generation reads its own).
    val explained = withConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false") {
      sql(s"EXPLAIN CODEGEN $query").collect().map(_.getString(0)).mkString
    }
    assert(explained.contains("dynamic filter: ") && explained.contains("PiecewiseMergeJoin LeftSemi"), explained)
    val df = assertAsStock(query)
    assert(collect(df.queryExecution.executedPlan) {
      case stage: WholeStageCodegenExec if stage.child.exists(_.isInstanceOf[PiecewiseMergeJoinExec]) => stage
    }.nonEmpty, df.queryExecution.executedPlan)
    assert(dynamicFilters(df).map(_.metrics("numStreamedRowsSkipped").value) == Seq(91))
  }

  test("a join keeps the streamed side's order where only streamed rows are output") {
    val df = sql("SELECT * FROM (SELECT id FROM range(0, 100) ORDER BY id DESC) a " +
      "JOIN range(0, 10) b ON a.id < b.id")
    val join = rangeJoins(df).head
    assert(join.outputOrdering.nonEmpty)
  }
}
