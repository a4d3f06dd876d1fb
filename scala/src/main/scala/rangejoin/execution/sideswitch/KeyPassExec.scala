package rangejoin.execution.sideswitch

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}

/**
 * The side switch's pass over the buffered side's sort key, in a stage of its own.
 * {{{
 *   *(2) RangeJoinSideSwitch          the switch's stage generates the chosen join's code alone
 *   :- ...
 *   +- RangeJoinKeyPass               not generated: the stage ends here
 *      +- *(1) Project [b.k AS key]   so the pass below is generated code of its own
 * }}}
 * Without it the pass's nodes would be members of the switch's stage, whose code never includes
 * them, and run interpreted, row by row: about twice the CPU of the same nodes generated (W3's
 * pass over a million keys: 102-136 ms of CPU interpreted, 54 generated; Spark's own `min(k)` of
 * that column, 23-31).
 */
private[rangejoin] case class KeyPassExec(child: SparkPlan) extends UnaryExecNode {

  override def nodeName: String = "RangeJoinKeyPass"

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = child.outputPartitioning

  protected override def doExecute(): RDD[InternalRow] = child.execute()

  override protected def withNewChildInternal(newChild: SparkPlan): KeyPassExec = copy(child = newChild)
}
