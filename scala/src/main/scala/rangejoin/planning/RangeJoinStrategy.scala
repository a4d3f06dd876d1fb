package rangejoin.planning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, Unevaluable}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{FullOuter, InnerLike}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.adaptive.{BroadcastQueryStageExec, LogicalQueryStage}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.{JoinSemantics, PiecewiseMergeJoinExec}

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
    if !isBroadcastStage(join.left) && !isBroadcastStage(join.right)
    range <- RangeCondition.split(condition, join.left, join.right)
    buildSide <- buildSideOf(join)
    if JoinSemantics(join.joinType, buildSide).isDefined
  } yield Seq(PiecewiseMergeJoinExec(
    range.leftKey, range.op, range.rightKey, range.leftKeyFirst, range.residual, condition,
    join.joinType, buildSide, planLater(join.left), planLater(join.right)).withSortedBroadcast)

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
   * Under adaptive execution, a join is re-planned once its children have run as query stages. A
   * broadcast stage that already ran is Spark's (rangejoin's sorted broadcast is not an exchange,
   * so never a stage), and can only be read as it was built: Spark plans that join against it.
   */
  private def isBroadcastStage(plan: LogicalPlan): Boolean = plan match {
    case LogicalQueryStage(_, _: BroadcastQueryStageExec) => true
    case _ => false
  }
}
