package rangejoin.bins

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * A binned join's grid, as the one row of its scalar subquery: the child's intervals, one row
 * each as `inputs` (span exponent, is the left side's, length, start, end), gathered into
 * [[SpanStatistics]] in one pass, and the grid chosen from those (`overlap`: both sides',
 * [[RangeJoinOverlapDataGrid]]; else one side's, [[RangeJoinDataGrid]]).
 * {{{
 *   BinGridOf [grid]                    one job of one stage: each task its statistics, the
 *   +- Project [exponent, is_left, ..]  driver merges them and picks the grid
 *      +- (the interval side, or a Union of both)
 * }}}
 * Spark's aggregates computed the same values in two to four stages
 * ([[rangejoin.execution.BinGridExec]] runs it; [[rangejoin.planning.BinGridStrategy]] plans it).
 * `inputs` are expressions of this node, so the optimizer keeps and renames them as it does any
 * column a node reads.
 */
private[rangejoin] case class BinGridOf(inputs: Seq[Attribute], overlap: Boolean, grid: Attribute, child: LogicalPlan)
  extends UnaryNode {

  override def output: Seq[Attribute] = Seq(grid)

  // The grid is made here, not read from the child.
  override def producedAttributes: AttributeSet = AttributeSet(grid)

  override def maxRows: Option[Long] = Some(1)

  override protected def withNewChildInternal(newChild: LogicalPlan): BinGridOf = copy(child = newChild)
}

private[rangejoin] object BinGridOf {

  /** The grid of `child`'s five columns (int, boolean, double, long, long: see [[BinGridOf]]). */
  def apply(child: LogicalPlan, overlap: Boolean): BinGridOf = {
    val dataType = if (overlap) BinKeys.OverlapGridType else BinKeys.GridType
    BinGridOf(child.output.take(5), overlap, AttributeReference("rangejoin_grid", dataType)(), child)
  }
}
