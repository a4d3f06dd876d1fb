package rangejoin.planning

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.internal.SQLConf

import rangejoin.bins.{BinChunks, BinUnchunk}
import rangejoin.execution.{BinChunksExec, BinUnchunkExec}

/**
 * Plans a binned join's chunked shuffle ([[BinChunks]], [[BinUnchunk]]): the chunks with Spark's
 * own exchange above them, on their partition key into the session's shuffle partitions, the
 * number the chunks are cut for (one number for both, read once here). The exchange is this
 * node's physical plan, so adaptive execution's query stage stands for the chunks, and the
 * unchunking above it is planned again whenever the plan is.
 */
private[rangejoin] object BinChunksStrategy extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case c: BinChunks =>
      val n = SQLConf.get.numShufflePartitions
      ShuffleExchangeExec(HashPartitioning(Seq(c.partition), n),
        BinChunksExec(c.keys, n, c.partition, c.chunk, planLater(c.child))) :: Nil
    case u: BinUnchunk => BinUnchunkExec(u.rows, u.keys, planLater(u.child)) :: Nil
    case _ => Nil
  }
}
