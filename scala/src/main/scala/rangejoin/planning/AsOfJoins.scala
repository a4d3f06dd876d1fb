package rangejoin.planning

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.JoinType
import org.apache.spark.sql.catalyst.plans.logical.{AsOfJoin, BinaryNode, BROADCAST, LogicalPlan, ResolvedHint, Statistics, SubqueryAlias}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.condition.AsOfPick
import rangejoin.shims.AsOfShims

/**
 * An as-of join of the DataFrame or pandas path that rangejoin runs ([[AsOfJoinStrategy]]):
 * Spark's `AsOfJoin`, renamed so that the optimizer's `RewriteAsOfJoin` (a correlated `min_by`
 * per left row, O(N x M)) leaves it alone. It keeps Spark's expressions as they are, as its own
 * fields, so the optimizer still rewrites and prunes through them: its children's columns are
 * pruned to what its expressions and its parents read (its output is derived from theirs, as a
 * Join's), and filters above it stay above it (it is no Join to push them through).
 * `shuffled`: its right side is buffered per shuffle partition (by the equality keys, or by ranges
 * of time without keys), not broadcast.
 */
private[rangejoin] case class RangeAsOfJoin(
    left: LogicalPlan,
    right: LogicalPlan,
    asOfCondition: Expression,
    condition: Option[Expression],
    joinType: JoinType,
    orderExpression: Expression,
    shuffled: Boolean) extends BinaryNode {

  // Spark's own rule for each line (a left join's right columns nullable), derived once per node.
  override lazy val output: Seq[Attribute] = asSpark.output

  /** At most one output row per left row, each a left row and a right row. */
  override def stats: Statistics = {
    val leftStats = left.stats
    val width = (output.map(_.dataType.defaultSize).sum + 8).toDouble
    val leftWidth = (left.output.map(_.dataType.defaultSize).sum + 8).toDouble
    Statistics(sizeInBytes = (BigDecimal(leftStats.sizeInBytes) * width / leftWidth).toBigInt.max(1),
      rowCount = leftStats.rowCount)
  }

  /** Spark's node again, for Spark's own plan. */
  def asSpark: AsOfJoin = AsOfJoin(left, right, asOfCondition, condition, joinType, orderExpression, None)

  override protected def withNewChildrenInternal(newLeft: LogicalPlan, newRight: LogicalPlan): RangeAsOfJoin =
    copy(left = newLeft, right = newRight)
}

/**
 * Takes the DataFrame and pandas paths' as-of joins (`DataFrame._joinAsOf`, `ps.merge_asof`)
 * before the optimizer rewrites them: a post-hoc resolution rule, which runs once the plan is
 * resolved, before `CheckAnalysis` and the optimizer. An `AsOfJoin` becomes a [[RangeAsOfJoin]]
 * when `spark.rangejoin.enabled` and `spark.rangejoin.asof.enabled` are on, its tolerance
 * passes Spark's own check (a constant, not negative: otherwise CheckAnalysis reports it), its
 * shape is one rangejoin runs ([[AsOfShape]]) and its right side can be broadcast: by its size
 * ([[BufferedSide.fits]], as for every range join, on the analyzed plan's estimate) or a
 * `broadcast(right)` hint (a DataFrame made from local Python data has no size); or buffered
 * per shuffle partition ([[BufferedSide.fitsShufflePartition]]). Otherwise,
 * and for SQL's `ASOF JOIN` (planned by Spark's sort-merge operator, or by [[AsOfJoinStrategy]]),
 * the plan is left as it is. It never fails a query: an error while deciding keeps Spark's plan.
 */
private[rangejoin] object AsOfJoinRule extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case j: AsOfJoin if !AsOfShims.isSqlAsOf(j) && j.resolved => placement(j).map { shuffled =>
      RangeAsOfJoin(j.left, j.right, j.asOfCondition, j.condition, j.joinType, j.orderExpression, shuffled)
    }.getOrElse(j)
  }

  /** `broadcast(right)`: the hint is still in the analyzed plan (the optimizer removes it). */
  private def broadcastHinted(plan: LogicalPlan): Boolean = plan match {
    case ResolvedHint(_, hint) => hint.strategy.contains(BROADCAST)
    case SubqueryAlias(_, child) => broadcastHinted(child)
    case _ => false
  }

  /**
   * Whether rangejoin takes the join, and where it buffers the right side: Some(false), broadcast;
   * Some(true), per shuffle partition (by the equality keys, or by ranges of time); None, not at all.
   */
  private def placement(j: AsOfJoin): Option[Boolean] = try {
    val conf = SQLConf.get
    val shape = AsOfShape(j.left, j.right, j.asOfCondition, j.condition, j.joinType, j.orderExpression, AsOfPick.MinBy)
    val taken = RangeJoinConf.enabled(conf) && RangeJoinConf.asOfEnabled(conf) &&
      j.toleranceAssertion.forall(t => t.foldable && t.eval() == true) && shape.isRight
    if (!taken) None else BufferedSide.asOfPlacement(j.right, conf, broadcastHinted(j.right))
  } catch {
    case NonFatal(_) => None
  }
}
