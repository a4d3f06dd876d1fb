package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionSet}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.plans.{FullOuter, InnerLike}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.execution.adaptive.LogicalQueryStage
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

  /**
   * Whether `plan` has at most one row per value of `keys`, as Spark's optimizer proves it
   * (`distinctKeys`: grouped by them, or distinct). A join on equality keys with such a side
   * gains nothing from a per-key index: Spark's hash join meets each row of the other side with
   * one row of it at most, O(N + M) pairs in all (a decorrelated `x > (SELECT avg(x) ... WHERE
   * k = outer.k)` is one), and the index would only add its sort.
   */
  def oneRowPerKey(plan: LogicalPlan, keys: Seq[Expression]): Boolean = {
    val keySet = ExpressionSet(keys)
    // Adaptive execution re-plans over query stages, which keep the logical plan they ran.
    val logical = plan.transformUp { case LogicalQueryStage(ran, _) => ran }
    keys.nonEmpty && logical.distinctKeys.exists(_.subsetOf(keySet))
  }

  /** The side JoinSelection prefers to broadcast when either would do. */
  private def preferred(join: Join): BuildSide =
    if (join.joinType.isInstanceOf[InnerLike] || join.joinType == FullOuter) getSmallerSide(join.left, join.right)
    else if (canBuildBroadcastLeft(join.joinType)) BuildLeft
    else BuildRight

  /**
   * The side Spark's last resort broadcasts, for a join with no equality keys where no side is
   * small enough ([[of]] finds none): a BroadcastNestedLoopJoin of the preferred side ("could be
   * very slow or OOM"), whatever its size, for every join type but inner and cross ones, which
   * Spark runs as a cartesian product instead (unless a hint rules that out). Buffering the same
   * side, rangejoin holds what Spark's broadcast would hold, and its sort keys beside it.
   */
  def lastResort(join: Join): Option[BuildSide] = {
    val hint = join.hint
    if (join.joinType.isInstanceOf[InnerLike] && !hintToNotBroadcastAndReplicate(hint)) None
    else if (hintToNotBroadcastAndReplicateLeft(hint)) Some(BuildRight)
    else if (hintToNotBroadcastAndReplicateRight(hint)) Some(BuildLeft)
    else Some(preferred(join))
  }

  /**
   * The side a join with equality keys and no side to broadcast buffers per shuffle partition:
   * the smaller, as Spark's shuffled hash join builds it, where its estimated size per shuffle
   * partition fits [[RangeJoinConf.ShuffleMaxPartitionSize]] (at run time, re-planned by adaptive
   * execution over its shuffle stages, their measured size); or why there is none.
   */
  def perShufflePartition(join: Join, conf: SQLConf): Either[String, BuildSide] = {
    val side = getSmallerSide(join.left, join.right)
    fitsShufflePartition(if (side == BuildRight) join.right else join.left, conf, "neither side fits a " +
      "shuffle partition: the smaller").map(_ => side)
  }

  /** Whether `plan`'s estimated size per shuffle partition fits the limit; or why not (`what` ...). */
  def fitsShufflePartition(plan: LogicalPlan, conf: SQLConf, what: String): Either[String, Unit] = {
    val perPartition = plan.stats.sizeInBytes / math.max(1, conf.numShufflePartitions)
    RangeJoinConf.shuffleMaxPartitionSize(conf) match {
      case None => Left(s"${RangeJoinConf.ShuffleMaxPartitionSize} is negative: no side is buffered per shuffle partition")
      case Some(max) if perPartition > max =>
        Left(s"$what is about $perPartition bytes per partition, above ${RangeJoinConf.ShuffleMaxPartitionSize} ($max)")
      case Some(_) => Right(())
    }
  }

  /**
   * Where an as-of join's right side is buffered, by its estimated size: Some(false), broadcast
   * (it [[fits]], or `broadcastHinted`); Some(true), per shuffle partition, where its share of a
   * partition fits ([[fitsShufflePartition]]): by the equality keys, or without keys by ranges of
   * time; None, nowhere: Spark's plan stays. The DataFrame paths decide it at analysis, SQL's
   * `ASOF JOIN` at planning.
   */
  def asOfPlacement(right: LogicalPlan, conf: SQLConf, broadcastHinted: Boolean): Option[Boolean] =
    if (fits(right, conf) || broadcastHinted) Some(false)
    else if (fitsShufflePartition(right, conf, "the right side").isRight) Some(true)
    else None

  /** BroadcastNestedLoopJoin's build side, as JoinSelection picks it; None where it would not broadcast. */
  def of(join: Join, conf: SQLConf): Option[BuildSide] = {
    val Join(left, right, joinType, _, hint) = join
    def either(buildLeft: Boolean, buildRight: Boolean): Option[BuildSide] =
      if (buildLeft && buildRight) Some(preferred(join))
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
