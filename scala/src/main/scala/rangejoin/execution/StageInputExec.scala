package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}

/**
 * Its child's rows, unchanged, in a stage of their own: a node with no generated code, so Spark
 * ends its child's generated stage below it and the parent's stage reads its rows as an input.
 * Spark's exchanges do this for its shuffled joins; the time-ranged as-of join shuffles its sides
 * itself, so its children are these.
 * {{{
 *   *(2) TimeRangedPiecewiseMergeAsOfJoin     generated: reads the ranges' rows as its input
 *   :- StageInput                             the boundary
 *   :  +- *(1) Project ... Scan ...           the left side's own generated stage
 * }}}
 */
private[rangejoin] case class StageInputExec(child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override def nodeName: String = "StageInput"

  protected override def doExecute(): RDD[InternalRow] = child.execute()

  override protected def withNewChildInternal(newChild: SparkPlan): StageInputExec = copy(child = newChild)
}
