package rangejoin.planning

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.optimizer.RewriteAsOfJoin
import org.apache.spark.sql.catalyst.plans.logical.{AsOfJoin, LogicalPlan}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.condition.AsOfPick
import rangejoin.execution.{PiecewiseMergeAsOfJoinExec, ShuffledPiecewiseMergeAsOfJoinExec, StageInputExec,
  TimeRangedPiecewiseMergeAsOfJoinExec}
import rangejoin.shims.{AsOfShims, SessionShims}

/**
 * Plans as-of joins as [[PiecewiseMergeAsOfJoinExec]], ahead of Spark's `AsOfJoinSelection`:
 *  - a [[RangeAsOfJoin]] (the DataFrame and pandas paths, taken by [[AsOfJoinRule]]) always, with
 *    stock Spark's tie and overflow rules (`min_by`); should its shape no longer read, or
 *    rangejoin have been switched off since the query was analyzed, as Spark would have planned
 *    it: `RewriteAsOfJoin` and the optimizer, then Spark's planner;
 *  - SQL's `ASOF JOIN` (Spark's `AsOfJoin` marked for its sort-merge operator) when its shape
 *    reads ([[AsOfShape]]) and its right side can be broadcast by its size, or buffered per
 *    shuffle partition: by the equality keys ([[ShuffledPiecewiseMergeAsOfJoinExec]]) or, with
 *    none, by ranges of time ([[TimeRangedPiecewiseMergeAsOfJoinExec]]); with the sort-merge
 *    operator's rules; otherwise Nil: Spark plans it.
 * Planning never fails a query: an error while deciding leaves the join to Spark.
 */
private[rangejoin] final case class AsOfJoinStrategy(session: SparkSession) extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case j: RangeAsOfJoin =>
      val ours = if (enabled) attempt(j.left, j.right, j.asOfCondition, j.condition, j.joinType, j.orderExpression,
        AsOfPick.MinBy, j.shuffled) else None
      ours.map(Seq(_)).getOrElse(Seq(planLater(stockRewrite(j.asSpark))))
    case j: AsOfJoin if AsOfShims.isSqlAsOf(j) && enabled && j.resolved =>
      placement(j.right, conf).toSeq.flatMap { shuffled =>
        attempt(j.left, j.right, j.asOfCondition, j.condition, j.joinType, j.orderExpression,
          AsOfPick.SortMergeScan, shuffled)
      }
    case _ => Nil
  }

  private def conf: SQLConf = session.sessionState.conf

  private def enabled: Boolean = try RangeJoinConf.enabled(conf) && RangeJoinConf.asOfEnabled(conf) catch {
    case NonFatal(_) => false
  }

  private def attempt(
      left: LogicalPlan,
      right: LogicalPlan,
      asOfCondition: org.apache.spark.sql.catalyst.expressions.Expression,
      condition: Option[org.apache.spark.sql.catalyst.expressions.Expression],
      joinType: org.apache.spark.sql.catalyst.plans.JoinType,
      distance: org.apache.spark.sql.catalyst.expressions.Expression,
      pick: AsOfPick,
      shuffled: Boolean): Option[SparkPlan] = try {
    AsOfShape(left, right, asOfCondition, condition, joinType, distance, pick).toOption.collect {
      case m if !shuffled => PiecewiseMergeAsOfJoinExec(m, joinType, planLater(left), planLater(right)).planned
      case m if m.leftKeys.nonEmpty => ShuffledPiecewiseMergeAsOfJoinExec(m, joinType, planLater(left), planLater(right))
      // The sample's job evaluates both sides once more than the join does, and its span of the
      // times decides whether Spark's distance is exact across the ranges: only deterministic
      // sides give that evaluation the join's times.
      case m if deterministic(left) && deterministic(right) =>
        TimeRangedPiecewiseMergeAsOfJoinExec(m, joinType, timeRanges(left, right),
          StageInputExec(planLater(left)), StageInputExec(planLater(right)))
    }
  } catch {
    case NonFatal(_) => None
  }

  /** Where SQL's join buffers its right side ([[BufferedSide.asOfPlacement]]); None on any error. */
  private def placement(right: LogicalPlan, conf: SQLConf): Option[Boolean] =
    try BufferedSide.asOfPlacement(right, conf, broadcastHinted = false) catch {
      case NonFatal(_) => None
    }

  private def deterministic(plan: LogicalPlan): Boolean = !plan.exists(_.expressions.exists(!_.deterministic))

  /**
   * How many ranges of time a join with no keys is split into, from both sides' estimated size, as
   * adaptive execution coalesces Spark's own shuffle partitions: about one per advisory partition
   * size, at least one per core where each gets a megabyte, at most `spark.sql.shuffle.partitions`.
   */
  private def timeRanges(left: LogicalPlan, right: LogicalPlan): Int = {
    val bytes = left.stats.sizeInBytes + right.stats.sizeInBytes
    def per(size: Long): BigInt = (bytes + size - 1) / size
    val bySize = per(conf.getConf(SQLConf.ADVISORY_PARTITION_SIZE_IN_BYTES))
    val byCores = per(1L << 20).min(session.sparkContext.defaultParallelism)
    bySize.max(byCores).min(conf.numShufflePartitions).max(1).toInt
  }

  /** Spark's own plan of a DataFrame as-of join: its rewrite, optimized as the query's would be. */
  private def stockRewrite(j: AsOfJoin): LogicalPlan = SessionShims.optimize(session, RewriteAsOfJoin(j))
}
