package rangejoin.planning

import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.plans.{FullOuter, InnerLike}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf

/**
 * Which side of a join rangejoin buffers (sorts and broadcasts), if any: shared by the strategy,
 * which buffers it, and the binned rewrite, which takes only joins with no such side.
 */
private[rangejoin] object BufferedSide extends JoinSelectionHelper {

  /** Whether `plan` is small enough to buffer, by rangejoin's threshold or else Spark's. */
  def fits(plan: LogicalPlan, conf: SQLConf): Boolean = RangeJoinConf.broadcastThreshold(conf) match {
    case None => canBroadcastBySize(plan, conf) // Spark's threshold, adaptive one included
    case Some(bytes) => plan.stats.sizeInBytes >= 0 && plan.stats.sizeInBytes <= bytes
  }

  /** BroadcastNestedLoopJoin's build side, as JoinSelection picks it; None where it would not broadcast. */
  def of(join: Join, conf: SQLConf): Option[BuildSide] = {
    val Join(left, right, joinType, _, hint) = join
    val preferred =
      if (joinType.isInstanceOf[InnerLike] || joinType == FullOuter) getSmallerSide(left, right)
      else if (canBuildBroadcastLeft(joinType)) BuildLeft
      else BuildRight
    def either(buildLeft: Boolean, buildRight: Boolean): Option[BuildSide] =
      if (buildLeft && buildRight) Some(preferred)
      else if (buildLeft) Some(BuildLeft)
      else if (buildRight) Some(BuildRight)
      else None
    def small(plan: LogicalPlan) = fits(plan, conf)
    def bySize = either(
      small(left) && !hintToNotBroadcastAndReplicateLeft(hint),
      small(right) && !hintToNotBroadcastAndReplicateRight(hint))

    if (hint.isEmpty) bySize
    else either(RangeJoinHints.onLeft(hint), RangeJoinHints.onRight(hint))
      .orElse(either(hintToBroadcastLeft(hint), hintToBroadcastRight(hint)))
      .orElse {
        val cartesianAskedFor = hintToShuffleReplicateNL(hint) &&
          joinType.isInstanceOf[InnerLike] && !hintToNotBroadcastAndReplicate(hint)
        if (cartesianAskedFor) None else bySize
      }
  }
}
