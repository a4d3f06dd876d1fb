package rangejoin

import org.apache.spark.sql.{DataFrame, QueryTest, Row}
import org.apache.spark.sql.execution.{InputAdapter, SparkPlan}
import org.apache.spark.sql.catalyst.optimizer.BuildRight
import org.apache.spark.sql.catalyst.plans.logical.Join
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanHelper, BroadcastQueryStageExec, LogicalQueryStage}
import org.apache.spark.sql.execution.exchange.BroadcastExchangeExec
import org.apache.spark.sql.execution.joins.{BroadcastNestedLoopJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.broadcast.SortedBroadcastExec
import rangejoin.planning.RangeJoinStrategy
/**
 * What the generated differential cases cannot reach: adaptive re-planning, how the buffered side
 * is broadcast, a buffered side large enough to be emitted in several slices, and when errors
 * raised by key expressions surface. Each answer is compared with stock Spark's.
 */
class ExecutionSuite extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper {
  import testImplicits._

  /**
   * Stock Spark's answer. `query` must build a new DataFrame each time it is evaluated: a DataFrame
   * keeps the plan it was first planned with, whatever the configuration says later.
   */
  private def stockAnswer(query: => DataFrame): Seq[Row] = withConf(RangeJoinConf.Enabled -> "false") {
    val df = query
    val rows = df.collect().toSeq
    assert(!operators(df).exists(_.isInstanceOf[PiecewiseMergeJoinExec]), "stock run used rangejoin")
    rows
  }

  private def operators(df: DataFrame): Seq[SparkPlan] = collect(df.queryExecution.executedPlan) {
    case p: PiecewiseMergeJoinExec => p
    case p: BroadcastNestedLoopJoinExec => p
  }

  /**
   * Runs `df`, then re-plans its join as adaptive execution does once the broadcast stage has run:
   * the join's buffered child becomes that stage. Returns what rangejoin's strategy plans.
   */
  private def replanOverBroadcastStage(df: DataFrame): (Join, Seq[SparkPlan]) = {
    df.collect()
    val stage = collect(df.queryExecution.executedPlan) { case s: BroadcastQueryStageExec => s }.head
    val join = df.queryExecution.optimizedPlan.collectFirst { case j: Join => j }.get
    val replanned = join.copy(right = LogicalQueryStage(join.right, stage))
    (replanned, RangeJoinStrategy(replanned))
  }

  test("adaptive re-planning leaves a join over Spark's materialized broadcast to Spark") {
    // Statically neither side fits under the threshold, so Spark's last resort is a
    // BroadcastNestedLoopJoin that broadcasts the right side anyway; rangejoin buffers that side
    // instead. Where Spark's broadcast has run (rangejoin off when the query was planned), its
    // runtime size is small and rangejoin would like it sorted: it must decline, since the
    // broadcast can only be read as it was built. (Spark's adaptive execution would also refuse a
    // plan that re-broadcasts a stage, so the end result is checked separately from the decision.)
    withSQLConf(
      SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "true",
      SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "10000") {
      def query = {
        val l = spark.range(0, 200000).filter($"id" % 2000 === 0).select($"id".as("a"))
        val r = spark.range(0, 200000).filter($"id" % 3000 === 7).select($"id".as("b"))
        l.join(r, $"a" < $"b", "left")
      }
      val df = query
      checkAnswer(df, stockAnswer(query))
      assert(operators(df).map(_.getClass) == Seq(classOf[PiecewiseMergeJoinExec]), df.queryExecution)
      val stockStage = withConf(RangeJoinConf.Enabled -> "false")(replanOverBroadcastStage(query)._1)
      assert(RangeJoinStrategy(stockStage) == Nil)
    }
  }

  test("adaptive execution keeps re-planning the rest of a query that has a range join") {
    // Once a broadcast stage has run, adaptive execution re-plans the rest of the query, and
    // refuses any plan where a broadcast stage feeds an operator other than Spark's broadcast
    // joins. rangejoin's sorted broadcast is not an exchange, so it never is such a stage: here the
    // sort-merge join still becomes a broadcast hash join once t2 turns out to have ten rows.
    withSQLConf(
      SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "true",
      SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "1000") {
      def query = {
        val t1 = spark.range(0, 100000).select($"id".as("a"))
        val t2 = spark.range(0, 100000).where($"id" < 10).select($"id".as("b"))
        val small = spark.range(0, 10).select($"id".as("c"))
        t1.join(t2, $"a" === $"b").join(small, $"a" < $"c")
      }
      def sortMergeJoins(df: DataFrame) =
        collect(df.queryExecution.executedPlan) { case j: SortMergeJoinExec => j }.size
      // Set inside: on Spark 3.5 withSQLConf returns Unit, not its body's value.
      var stock = -1
      withSQLConf(RangeJoinConf.Enabled -> "false") {
        val df = query
        df.collect()
        stock = sortMergeJoins(df)
      }
      val df = query
      checkAnswer(df, stockAnswer(query))
      assert(operators(df).exists(_.isInstanceOf[PiecewiseMergeJoinExec]), df.queryExecution)
      assert(stock == 0 && sortMergeJoins(df) == 0, df.queryExecution)
    }
  }

  test("the buffered side is sorted and broadcast by SortedBroadcastExec, not by an exchange") {
    for (aqe <- Seq("true", "false")) {
      withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe) {
        def query = spark.range(0, 1000).select($"id".as("a"))
          .join(spark.range(0, 50).select(($"id" * 3).as("b")), $"a" < $"b")
        val df = query
        checkAnswer(df, stockAnswer(query))
        val plan = df.queryExecution.executedPlan
        val joins = collect(plan) { case j: PiecewiseMergeJoinExec => j }
        assert(joins.size == 1, plan)
        val buffered = (if (joins.head.buildSide == BuildRight) joins.head.right else joins.head.left) match {
          case input: InputAdapter => input.child // the join is generated: its stage ends here
          case other => other
        }
        assert(buffered.isInstanceOf[SortedBroadcastExec], plan)
        assert(collect(plan) { case e: BroadcastExchangeExec => e }.isEmpty, plan)
        assert(buffered.metrics("numRows").value == 50)
      }
    }
  }

  test("a large buffered side is sorted once and its unmatched rows emitted once, in slices") {
    // 150,000 buffered rows: more than one slice of the buffered side's own output.
    def query = {
      val buffered = spark.range(0, 150000).select(($"id" * 7 % 150001).as("b"), $"id".as("bid"))
      val streamed = spark.range(0, 40, 1, 4).select(($"id" * 3000).as("a"))
      streamed.join(buffered.hint("broadcast"), $"a" > $"b" && ($"bid" % 5 =!= 0), "full")
        .groupBy($"a".isNull, $"b".isNull).count()
    }
    val df = query
    checkAnswer(df, stockAnswer(query))
    assert(operators(df).exists(_.isInstanceOf[PiecewiseMergeJoinExec]))
  }

  // ANSI arithmetic that overflows on one row: Long.MaxValue + 1.
  private val overflowing = Seq(1L, Long.MaxValue, 5L)

  /** The error condition each of stock Spark and rangejoin raises for `query`, if any. */
  private def errorConditions(query: => DataFrame): (Option[String], Option[String]) = {
    def condition(run: => Seq[Row]) = scala.util.Try(run).failed.toOption.map { e =>
      Iterator.iterate(e)(_.getCause).takeWhile(_ != null).collectFirst {
        case t: org.apache.spark.SparkThrowable if TestShims.condition(t) != null => TestShims.condition(t)
      }.getOrElse(e.getClass.getName)
    }
    val ours = query
    assert(ours.queryExecution.sparkPlan.exists(_.isInstanceOf[PiecewiseMergeJoinExec]), ours.queryExecution)
    (condition(stockAnswer(query)), condition(ours.collect().toSeq))
  }

  test("a buffered key that fails raises the error only where stock Spark raises it") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      def buffered = overflowing.toDF("b").hint("broadcast")
      def streamed(rows: Int) = spark.range(rows).select($"id".as("a"))
      // The other side is empty: Spark evaluates no pair, so nothing fails.
      assert(errorConditions(streamed(0).join(buffered, $"a" < $"b" + 1)) == (None, None))
      // Rows on both sides: both raise the overflow.
      val (stock, ours) = errorConditions(streamed(3).join(buffered, $"a" < $"b" + 1))
      assert(stock.isDefined && stock == ours, (stock, ours))
      // An outer join that preserves the buffered side, against an empty streamed side: every
      // buffered row once, padded, with no error.
      def outer = streamed(0).join(buffered, $"a" < $"b" + 1, "right")
      val df = outer
      checkAnswer(df, stockAnswer(outer))
      assert(df.collect().length == 3)
      assert(operators(df).exists(_.isInstanceOf[PiecewiseMergeJoinExec]), df.queryExecution)
    }
  }

  test("a streamed key that fails is not evaluated when there is no buffered key to compare") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      def query = overflowing.toDF("a")
        .join(spark.range(0).select($"id".as("b")).hint("broadcast"), $"a" + 1 < $"b", "left")
      assert(errorConditions(query) == (None, None))
      val df = query
      checkAnswer(df, stockAnswer(query))
      assert(operators(df).exists(_.isInstanceOf[PiecewiseMergeJoinExec]), df.queryExecution)
    }
  }
}
