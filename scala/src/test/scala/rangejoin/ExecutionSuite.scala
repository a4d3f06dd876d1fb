package rangejoin

import org.apache.spark.sql.{DataFrame, QueryTest, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.catalyst.optimizer.BuildRight
import org.apache.spark.sql.catalyst.plans.logical.{BROADCAST, HintInfo, Join, JoinHint}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanHelper, BroadcastQueryStageExec, LogicalQueryStage}
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec
import org.apache.spark.sql.execution.joins.BroadcastNestedLoopJoinExec
import org.apache.spark.sql.internal.SQLConf

import rangejoin.execution.{PiecewiseMergeJoinExec, SortedBroadcastMode}
import rangejoin.planning.RangeJoinStrategy

/**
 * What the generated differential cases cannot reach: adaptive re-planning over broadcasts that
 * already ran, exchange reuse, a buffered side large enough to be emitted in several slices, and
 * when errors raised by key expressions surface. Each answer is compared with stock Spark's.
 */
class ExecutionSuite extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper {
  import testImplicits._

  private def stockAnswer(df: => DataFrame): Seq[Row] =
    withSQLConf(RangeJoinConf.Enabled -> "false")(df.collect().toSeq)

  private def operators(df: DataFrame): Seq[SparkPlan] = collect(df.queryExecution.executedPlan) {
    case p: PiecewiseMergeJoinExec => p
    case p: BroadcastNestedLoopJoinExec => p
  }

  /**
   * Runs `df`, then re-plans its join as adaptive execution does once the broadcast stage has run:
   * the join's buffered child becomes that stage. Returns what rangejoin's strategy plans.
   */
  private def replanOverBroadcastStage(df: DataFrame, hint: JoinHint = JoinHint.NONE): Seq[SparkPlan] = {
    df.collect()
    val stage = collect(df.queryExecution.executedPlan) { case s: BroadcastQueryStageExec => s }.head
    val join = df.queryExecution.optimizedPlan.collectFirst { case j: Join => j }.get
    val staged = join.copy(right = LogicalQueryStage(join.right, stage), hint = hint)
    RangeJoinStrategy(spark)(staged)
  }

  test("adaptive re-planning leaves a join over Spark's materialized broadcast to Spark") {
    // Statically neither side fits under the threshold, so Spark plans a BroadcastNestedLoopJoin
    // that broadcasts the right side anyway. Once that broadcast has run its runtime size is small,
    // and rangejoin would like it sorted: it must decline, since the broadcast can only be read
    // as it was built. (Spark's adaptive execution would also refuse a plan that re-broadcasts a
    // stage, so the end result is checked separately from the decision.)
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
      assert(operators(df).forall(_.isInstanceOf[BroadcastNestedLoopJoinExec]), df.queryExecution)
      assert(replanOverBroadcastStage(query) == Nil)
    }
  }

  test("adaptive re-planning keeps buffering a side that already ran as its sorted broadcast") {
    withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "true") {
      def query = spark.range(0, 100).select($"id".as("a"))
        .join(spark.range(0, 10).select(($"id" * 7).as("b")), $"a" < $"b")
      checkAnswer(query, stockAnswer(query))
      def buffersRight(plans: Seq[SparkPlan]) = plans match {
        case Seq(j: PiecewiseMergeJoinExec) => j.buildSide == BuildRight
        case _ => false
      }
      assert(buffersRight(replanOverBroadcastStage(query)))
      // Even when the re-planned join would now prefer the other side (here a hint says so;
      // at run time, new sizes can), the sorted broadcast that already ran stays buffered.
      val preferLeft = JoinHint(Some(HintInfo(Some(BROADCAST))), None)
      assert(buffersRight(replanOverBroadcastStage(query, preferLeft)))
    }
  }

  test("a sorted broadcast is reused by two joins that sort the same side by the same key") {
    withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false") {
      def query = {
        val small = spark.range(0, 50).select(($"id" * 3).as("b"))
        val big = spark.range(0, 1000).select($"id".as("a"))
        val j1 = big.join(small, $"a" < $"b").groupBy().count()
        val j2 = big.filter($"a" % 2 === 0).join(small, $"a" < $"b").groupBy().count()
        j1.union(j2)
      }
      val df = query
      checkAnswer(df, stockAnswer(query))
      val plan = df.queryExecution.executedPlan
      assert(collect(plan) { case j: PiecewiseMergeJoinExec => j }.size == 2, plan)
      assert(collect(plan) { case r: ReusedExchangeExec => r }.size == 1, plan)
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

  test("the sorted broadcast is what the buffered side ships") {
    val df = spark.range(10).select($"id".as("a"))
      .join(spark.range(5).select($"id".as("b")), $"a" >= $"b")
    val modes = collect(df.queryExecution.executedPlan) {
      case j: PiecewiseMergeJoinExec => j.bufferedMode
    }
    assert(modes.size == 1 && modes.head.isInstanceOf[SortedBroadcastMode])
    checkAnswer(df, stockAnswer(df))
  }

  // ANSI arithmetic that overflows on one row: Long.MaxValue + 1.
  private val overflowing = Seq(1L, Long.MaxValue, 5L)

  private def errorConditions(df: => DataFrame): (Option[String], Option[String]) = {
    def condition(run: => Seq[Row]) = scala.util.Try(run).failed.toOption.map { e =>
      Iterator.iterate(e)(_.getCause).takeWhile(_ != null).collectFirst {
        case t: org.apache.spark.SparkThrowable if t.getCondition != null => t.getCondition
      }.getOrElse(e.getClass.getName)
    }
    (condition(stockAnswer(df)), condition(df.collect().toSeq))
  }

  test("a buffered key that fails raises the error only where stock Spark raises it") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      val buffered = overflowing.toDF("b")
      // The other side is empty: Spark evaluates no pair, so nothing fails.
      val none = spark.range(0).select($"id".as("a")).join(buffered.hint("broadcast"), $"a" < $"b" + 1)
      assert(errorConditions(none) == (None, None))
      // Rows on both sides: both raise the overflow.
      val some = spark.range(3).select($"id".as("a")).join(buffered.hint("broadcast"), $"a" < $"b" + 1)
      val (stock, ours) = errorConditions(some)
      assert(stock.isDefined && stock == ours, (stock, ours))
      // An outer join that preserves the buffered side, against an empty streamed side: every
      // buffered row once, padded, with no error.
      val outer = spark.range(0).select($"id".as("a"))
        .join(buffered.hint("broadcast"), $"a" < $"b" + 1, "right")
      checkAnswer(outer, stockAnswer(outer))
      assert(outer.collect().length == 3)
    }
  }

  test("a streamed key that fails is not evaluated when there is no buffered key to compare") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      val streamed = overflowing.toDF("a")
      val empty = spark.range(0).select($"id".as("b"))
      val df = streamed.join(empty.hint("broadcast"), $"a" + 1 < $"b", "left")
      assert(errorConditions(df) == (None, None))
      checkAnswer(df, stockAnswer(df))
    }
  }
}
