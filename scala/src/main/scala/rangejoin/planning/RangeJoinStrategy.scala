package rangejoin.planning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Expression, Unevaluable}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{FullOuter, InnerLike}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.catalyst.plans.physical.BroadcastPartitioning
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.adaptive.{BroadcastQueryStageExec, LogicalQueryStage}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.{JoinSemantics, PiecewiseMergeJoinExec, SortedBroadcastMode}

/**
 * Plans a join as a [[PiecewiseMergeJoinExec]] where Spark would compare every pair of rows: no
 * equi-join keys, a deterministic condition with a range conjunct ([[RangeCondition]]), a join type
 * the driver handles, and a side that can be broadcast. Injected ahead of Spark's JoinSelection;
 * every other join, and every join it cannot take, it returns `Nil` for, so Spark plans it exactly
 * as before.
 *
 * The buffered side is chosen as JoinSelection chooses BroadcastNestedLoopJoin's build side:
 * broadcast hints first, then sizes under the broadcast threshold (the smaller side for inner and
 * full joins, otherwise the side that is not preserved). Where Spark would plan a cartesian
 * product, or a nested loop join over a side too large to broadcast, this strategy declines.
 */
case class RangeJoinStrategy(session: SparkSession) extends SparkStrategy with JoinSelectionHelper {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case join: Join if RangeJoinConf.enabled(SQLConf.get) => planRangeJoin(join).getOrElse(Nil)
    case _ => Nil
  }

  private def planRangeJoin(join: Join): Option[Seq[SparkPlan]] = for {
    condition <- join.condition
    if ExtractEquiJoinKeys.unapply(join).isEmpty && evaluable(condition)
    range <- RangeCondition.split(condition, join.left, join.right)
    buildSide <- buildSideOf(join)
    if JoinSemantics(join.joinType, buildSide).isDefined
    if compatibleWithQueryStages(join, buildSide, range)
  } yield Seq(PiecewiseMergeJoinExec(
    range.leftKey, range.op, range.rightKey, range.leftKeyFirst, range.residual, condition,
    join.joinType, buildSide, planLater(join.left), planLater(join.right)))

  // Python UDFs, unplanned subqueries and other placeholders are Spark's to plan.
  private def evaluable(condition: Expression): Boolean =
    condition.deterministic &&
      !condition.exists(e => e.isInstanceOf[Unevaluable] && !e.isInstanceOf[Attribute])

  /** BroadcastNestedLoopJoin's build side, as JoinSelection picks it; None where it would not broadcast. */
  private def buildSideOf(join: Join): Option[BuildSide] = {
    val Join(left, right, joinType, _, hint) = join
    val conf = SQLConf.get
    val preferred =
      if (joinType.isInstanceOf[InnerLike] || joinType == FullOuter) getSmallerSide(left, right)
      else if (canBuildBroadcastLeft(joinType)) BuildLeft
      else BuildRight
    def either(buildLeft: Boolean, buildRight: Boolean): Option[BuildSide] =
      if (buildLeft && buildRight) Some(preferred)
      else if (buildLeft) Some(BuildLeft)
      else if (buildRight) Some(BuildRight)
      else None
    def bySize = either(
      canBroadcastBySize(left, conf) && !hintToNotBroadcastAndReplicateLeft(hint),
      canBroadcastBySize(right, conf) && !hintToNotBroadcastAndReplicateRight(hint))

    if (hint.isEmpty) bySize
    else either(hintToBroadcastLeft(hint), hintToBroadcastRight(hint)).orElse {
      val cartesianAskedFor = hintToShuffleReplicateNL(hint) &&
        joinType.isInstanceOf[InnerLike] && !hintToNotBroadcastAndReplicate(hint)
      if (cartesianAskedFor) None else bySize
    }
  }

  /**
   * When adaptive execution re-plans a join whose child already ran as a broadcast stage, that
   * broadcast can only be read as it was built: fine if it is this join's sorted buffer, but a
   * streamed side or another kind of broadcast is left to Spark (which plans it against that
   * stage as it was).
   */
  private def compatibleWithQueryStages(join: Join, buildSide: BuildSide, range: RangeCondition): Boolean = {
    def broadcastMode(plan: LogicalPlan) = plan match {
      case LogicalQueryStage(_, stage: BroadcastQueryStageExec) =>
        Some(stage.outputPartitioning match {
          case BroadcastPartitioning(mode) => Some(mode)
          case _ => None
        })
      case _ => None
    }
    val (streamed, buffered, bufferedKey) = buildSide match {
      case BuildRight => (join.left, join.right, range.rightKey)
      case BuildLeft => (join.right, join.left, range.leftKey)
    }
    val wanted = SortedBroadcastMode(BindReferences.bindReference(bufferedKey, buffered.output))
    broadcastMode(streamed).isEmpty && broadcastMode(buffered).forall(_.contains(wanted))
  }
}
