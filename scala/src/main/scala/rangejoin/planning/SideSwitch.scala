package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.Alias
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans.InnerLike
import org.apache.spark.sql.catalyst.plans.logical.{Join, JoinHint, LogicalPlan, Project}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.condition.{CannotFail, IndexSpec}
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.filter.DynamicFilter
import rangejoin.execution.sideswitch.{KeyPassExec, SideSwitchExec}

/**
 * Plans a [[SideSwitchExec]] over an inner range join whose buffered side is large: the join as
 * planned, and the same join buffering the other side's rows that can match, chosen when it runs.
 * Only where the choice cannot change the answer and is the planner's to make:
 *  - an inner join without equality keys, with no hint (a hinted side is the user's choice);
 *  - the buffered side estimated at [[RangeJoinConf.SideSwitchMinSize]] or more: a smaller one
 *    costs too little to build for a second pass over its key to pay;
 *  - both sides deterministic, since a side is read by both its joins' plans and the switch's
 *    pass, and only one result may be seen;
 *  - sort keys that cannot fail, on both sides: the switch evaluates the buffered one on every
 *    row, the filter the other on every row of its side;
 *  - the other side's key sorts in runs ([[rangejoin.execution.index.SortedRuns]]), which can
 *    stop reading once a side proves too large.
 * Anything else: None, and the join is planned as before.
 */
private[rangejoin] object SideSwitch {

  /**
   * The switch over `default`, the range join of `join`, if the join qualifies; `plan` plans the
   * join buffering a given side (without its dynamic filter and sorted broadcast).
   */
  def apply(
      join: Join,
      default: PiecewiseMergeJoinExec,
      plan: BuildSide => Option[PiecewiseMergeJoinExec],
      planLater: LogicalPlan => SparkPlan,
      conf: SQLConf): Option[SparkPlan] = {
    val streamedIsLeft = default.buildSide == BuildRight
    val (streamedSide, bufferedSide) = if (streamedIsLeft) (join.left, join.right) else (join.right, join.left)
    def qualifies = RangeJoinConf.sideSwitch(conf) &&
      join.joinType.isInstanceOf[InnerLike] && join.hint == JoinHint.NONE &&
      RangeJoinConf.dynamicFilter(conf) &&
      bufferedSide.stats.sizeInBytes >= RangeJoinConf.sideSwitchMinSize(conf) &&
      streamedSide.deterministic && bufferedSide.deterministic
    if (!qualifies) return None
    val sortPredicate = IndexSpec.of(default.range, streamedIsLeft).sortPredicate
    for {
      _ <- Some(()).filter(_ => !default.range.isKeyed && default.bufferedExtreme.isEmpty &&
        CannotFail(sortPredicate.streamedKey) && CannotFail(sortPredicate.bufferedKey))
      swapped <- plan(if (streamedIsLeft) BuildLeft else BuildRight)
      if swapped.sortsPartitions
    } yield {
      // The swapped join buffers the other side's rows that some buffered row pairs with.
      val keep = DynamicFilter.Spec(sortPredicate.op, sortPredicate.streamedKey, keepRejected = false)
      val keys = KeyPassExec(planLater(Project(Seq(Alias(sortPredicate.bufferedKey, "key")()), bufferedSide)))
      SideSwitchExec(default.planned(withFilter = true, onDemand = true),
        swapped.planned(withFilter = true, onDemand = true), keys, keep, RangeJoinConf.sideSwitchMaxRatio(conf))
    }
  }
}
