package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.Alias
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans.InnerLike
import org.apache.spark.sql.catalyst.plans.logical.{Join, JoinHint, LogicalPlan, Project}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.{DynamicBound, DynamicFilterExec, Extreme, PiecewiseMergeJoinExec, SideSwitchExec}
import rangejoin.execution.index.IndexSpec
import rangejoin.expressions.CannotFail

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
    val sortBound = IndexSpec.of(default.range, streamedIsLeft).sortBound
    for {
      _ <- Option.when(!default.range.isKeyed && default.bufferedExtreme.isEmpty &&
        CannotFail(sortBound.streamedKey) && CannotFail(sortBound.bufferedKey))(())
      swappedJoin <- plan(if (streamedIsLeft) BuildLeft else BuildRight)
      if swappedJoin.sortsInRuns
    } yield {
      // The other side, behind the bound the switch sets: its rows that some buffered row pairs.
      val prefilter = new DynamicBound(sortBound.op, sortBound.streamedKey, keepRejected = false,
        source = s"${Extreme.deciding(sortBound.op)}(${sortBound.bufferedKey}), from the switch")
      val filtered = DynamicFilterExec(prefilter, swappedJoin.children(if (streamedIsLeft) 0 else 1))
      val swapped = if (streamedIsLeft) swappedJoin.copy(left = filtered) else swappedJoin.copy(right = filtered)
      val keys = planLater(Project(Seq(Alias(sortBound.bufferedKey, "key")()), bufferedSide))
      SideSwitchExec(planned(default, conf), planned(swapped, conf), keys, prefilter,
        Extreme.deciding(sortBound.op), RangeJoinConf.sideSwitchMaxRatio(conf))
    }
  }

  /** As the strategy plans a join, its sorted broadcast built only if the switch chooses it. */
  private def planned(join: PiecewiseMergeJoinExec, conf: SQLConf): SparkPlan =
    (if (RangeJoinConf.dynamicFilter(conf)) join.withDynamicFilter else join).withSortedBroadcast(onDemand = true)
}
