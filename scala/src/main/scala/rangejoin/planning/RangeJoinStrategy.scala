package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.optimizer.{BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{ExistenceJoin, LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.adaptive.{BroadcastQueryStageExec, LogicalQueryStage}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.condition.{CannotFail, Evaluable, RangeCondition}
import rangejoin.execution.{PiecewiseMergeJoinExec, ShuffledPiecewiseMergeJoinExec}
import rangejoin.execution.driver.JoinSemantics

/**
 * Plans a join as a [[PiecewiseMergeJoinExec]] where Spark would compare every pair of rows (no
 * equi-join keys), or every pair within a key (equi-join keys and a range: a per-key index): a
 * deterministic condition with a range conjunct ([[ConditionSplit]]), a join type the driver
 * handles, and a side that can be broadcast. Injected ahead of Spark's JoinSelection;
 * every other join, and every join it cannot take, it returns `Nil` for, so Spark plans it exactly
 * as before.
 *
 * The buffered side is chosen as JoinSelection chooses BroadcastNestedLoopJoin's build side:
 * hints first (`RANGE_JOIN`, then `BROADCAST`), then sizes under the broadcast threshold
 * ([[RangeJoinConf.BroadcastThreshold]]; the smaller side for inner and full joins, otherwise the
 * side that is not preserved). A `RANGE_JOIN` side is buffered whatever its size. Where no side
 * fits and Spark's last resort is a nested loop join broadcasting a side whatever its size (outer,
 * semi, anti and existence joins without equality keys), it buffers that side; where it is a
 * cartesian product (inner joins), which holds neither side in memory, it declines. A join it
 * declines despite a `RANGE_JOIN` hint is reported the way Spark reports its own join hints it
 * cannot honour.
 *
 * Semi, anti and existence joins with no residual need only the subquery side's extreme key
 * ([[rangejoin.condition.Extreme]]): that side is reduced to one row where it is, however large it is.
 */
private[rangejoin] object RangeJoinStrategy extends SparkStrategy with JoinSelectionHelper {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case join: Join =>
      val conf = SQLConf.get
      val planned =
        if (!RangeJoinConf.enabled(conf)) Left(s"${RangeJoinConf.Enabled} is false")
        else planRangeJoin(join, conf)
      planned match {
        case Right(rangeJoin) => rangeJoin :: Nil
        case Left(reason) =>
          RangeJoinHints.of(join.hint.leftHint).orElse(RangeJoinHints.of(join.hint.rightHint))
            .foreach(conf.hintErrorHandler.joinHintNotSupported(_, reason))
          Nil
      }
    case _ => Nil
  }

  /** The range join, or why there is none. */
  private def planRangeJoin(join: Join, conf: SQLConf): Either[String, SparkPlan] = for {
    condition <- join.condition.toRight("the join has no condition")
    _ <- Either.cond(Evaluable(condition), (),
      "its condition is not deterministic, or holds a subquery or a Python UDF")
    _ <- Either.cond(!isBroadcastStage(join.left) && !isBroadcastStage(join.right), (),
      "Spark has already broadcast one of its sides")
    keys <- equalityKeys(join, condition, conf)
    (rangeCondition, leftKeys, rightKeys) = keys
    // Which conjuncts drive depends on the streamed side only for a band's second bound.
    rangeStreamingLeft <- ConditionSplit.split(rangeCondition, join.left, join.right, streamedIsLeft = true)
      .toRight("no conjunct compares the two sides with <, <=, > or >= on keys rangejoin can sort")
    fastPath = if (leftKeys.isEmpty) existenceFastPath(join, condition, rangeStreamingLeft, conf) else None
    plan <- fastPath.toRight(()).left.flatMap { _ =>
      def rangeBuffering(buildSide: BuildSide): Either[String, RangeCondition] = for {
        semantics <- JoinSemantics(join.joinType, buildSide).toRight(
          s"rangejoin does not handle ${join.joinType} joins")
        bounds <- ConditionSplit.split(rangeCondition, join.left, join.right, buildSide == BuildRight)
          .toRight("no conjunct compares the two sides on keys rangejoin can sort")
        range = bounds.copy(leftKeys = leftKeys, rightKeys = rightKeys)
        _ <- if (range.isKeyed) perKeyExact(range, semantics) else Right(())
        _ <- Either.cond(!BufferedSide.oneRowPerKey(join.left, leftKeys) &&
            !BufferedSide.oneRowPerKey(join.right, rightKeys), (),
          "a side has one row per equality key: Spark's hash join meets each row of the other side " +
            "with one row at most, and a per-key index would only add its sort")
      } yield range
      def joinBuffering(buildSide: BuildSide): Either[String, PiecewiseMergeJoinExec] =
        rangeBuffering(buildSide).map(range => PiecewiseMergeJoinExec(
          range, condition, join.joinType, buildSide, planLater(join.left), planLater(join.right)))
      // Where Spark itself would broadcast a side however large (an outer, semi, anti or
      // existence join without equality keys), that side; a cartesian product it leaves. With
      // equality keys and no side to broadcast, both sides are shuffled by the keys.
      BufferedSide.of(join, conf).orElse(if (leftKeys.isEmpty) BufferedSide.lastResort(join) else None) match {
        case Some(buildSide) => joinBuffering(buildSide).map { rangeJoin =>
          SideSwitch(join, rangeJoin, joinBuffering(_).toOption, planLater, conf)
            .getOrElse(rangeJoin.planned(RangeJoinConf.dynamicFilter(conf)))
        }
        case None if leftKeys.nonEmpty => for {
          buildSide <- BufferedSide.perShufflePartition(join, conf)
          range <- rangeBuffering(buildSide)
        } yield ShuffledPiecewiseMergeJoinExec(
          range, condition, join.joinType, buildSide, planLater(join.left), planLater(join.right))
        case None => Left("neither side is small enough to broadcast (spark.rangejoin.broadcastThreshold) " +
          "or hinted, and Spark runs the join as a cartesian product, which holds neither in memory")
      }
    }
  } yield plan

  /**
   * The conjuncts left for the range join, and the equi-join keys of each side as Spark's hash
   * joins take them (none for a join without). A join with equality keys is a range join only
   * where its keys cannot fail: the per-key index evaluates them on every row of each side, as
   * BroadcastHashJoin does, but Spark may plan a join that evaluates fewer (an empty side).
   */
  private def equalityKeys(join: Join, condition: Expression, conf: SQLConf)
      : Either[String, (Expression, Seq[Expression], Seq[Expression])] =
    join match {
      case ExtractEquiJoinKeys(_, leftKeys, rightKeys, otherCondition, _, _, _, _) =>
        for {
          _ <- Either.cond(RangeJoinConf.equalityKeys(conf), (),
            s"the join has equi-join keys and ${RangeJoinConf.EqualityKeys} is false")
          other <- otherCondition.toRight(
            "the join has equi-join keys and no other condition: Spark's own joins serve it")
          _ <- PerKeyIndex.keysQualify(leftKeys ++ rightKeys)
        } yield (other, leftKeys, rightKeys)
      case _ => Right((condition, Nil, Nil))
    }

  /**
   * Whether a per-key index answers as Spark's hash join would. It evaluates the range keys on
   * every row, Spark only on the pairs whose keys are equal: they must not be able to fail. And a
   * semi, anti or existence join's row is decided by its first passing pair, which for Spark is
   * the first in its hash table's order within the key, not the index's: a residual that can fail
   * would fail (or not) on other pairs.
   */
  private def perKeyExact(range: RangeCondition, semantics: JoinSemantics): Either[String, Unit] = for {
    _ <- Either.cond(range.predicates.forall(p => CannotFail(p.leftKey) && CannotFail(p.rightKey)), (),
      "with equality keys, the range keys must not be able to fail: Spark evaluates them only " +
        "on the pairs whose keys are equal")
    _ <- Either.cond(semantics.emitsPairs || range.residual.forall(CannotFail(_)), (),
      "a semi, anti or existence join with equality keys has a residual that can fail")
  } yield ()

  /**
   * A semi, anti or existence join with no residual, decided for each left row by the right
   * side's extreme key alone. Keys must not be able to fail: Spark evaluates them only on the
   * pairs it compares, this plan on every row of each side.
   */
  private def existenceFastPath(
      join: Join,
      condition: Expression,
      range: RangeCondition,
      conf: SQLConf): Option[SparkPlan] = {
    val existence = join.joinType match {
      case LeftSemi | LeftAnti | ExistenceJoin(_) => true
      case _ => false
    }
    range.predicates match {
      case Seq(p) if existence && range.residual.isEmpty && CannotFail(p.leftKey) &&
          CannotFail(p.rightKey) && RangeJoinConf.existenceFastPath(conf) =>
        Some(PiecewiseMergeJoinExec(
          range, condition, join.joinType, BuildRight, planLater(join.left), planLater(join.right),
          bufferedExtreme = Some(p.op.deciding)).planned(RangeJoinConf.dynamicFilter(conf)))
      case _ => None
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
