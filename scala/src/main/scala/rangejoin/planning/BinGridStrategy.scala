package rangejoin.planning

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}

import rangejoin.bins.BinGridOf
import rangejoin.execution.BinGridExec

/**
 * Plans a binned join's grid subquery ([[BinGridOf]]) as [[BinGridExec]]. Unconditional: the node
 * exists only where [[rangejoin.bins.BinnedRangeJoin]] put it, and nothing else can run it.
 */
private[rangejoin] object BinGridStrategy extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case g: BinGridOf => BinGridExec(g.inputs, g.overlap, g.grid, planLater(g.child)) :: Nil
    case _ => Nil
  }
}
