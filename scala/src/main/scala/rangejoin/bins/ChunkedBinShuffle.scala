package rangejoin.bins

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.JOIN

import rangejoin.RangeJoinConf
import rangejoin.planning.BufferedSide

/**
 * Shuffles both sides of a binned join ([[BinnedRangeJoin]]) in chunks ([[BinChunks]]), where the
 * bins are its only equi-join keys: the sides then come out of the shuffle hash-partitioned on
 * exactly the keys the join asks for, and Spark adds no exchange of its own.
 * {{{
 *   Join Inner, bin_l = bin_r AND ...        Join Inner, bin_l = bin_r AND ...
 *   :- l                              ==>    :- BinUnchunk by bin_l
 *   +- r                                     :  +- BinChunks bin_l
 *                                            :     +- l
 *                                            +- (r, the same)
 * }}}
 * Only where rangejoin's `ShuffledPiecewiseMergeJoin` will run the join (no side to broadcast,
 * the buffered side's share of a partition within `spark.rangejoin.shuffle.maxPartitionSize`).
 * A pre-CBO rule: it runs once, after the optimizer has pruned each side's columns (the chunks
 * carry whatever their child outputs, and nothing prunes through them).
 */
private[rangejoin] object ChunkedBinShuffle extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!RangeJoinConf.enabled(conf) || !RangeJoinConf.binning(conf)) plan
    else plan.transformUpWithPruning(_.containsPattern(JOIN)) {
      case join @ ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, _, _, left, right, _)
          if leftKeys.nonEmpty && (leftKeys ++ rightKeys).forall(BinnedRangeJoin.isBin) &&
            !isChunked(left) && !isChunked(right) && perShufflePartition(join.asInstanceOf[Join]) =>
        join.asInstanceOf[Join].copy(left = chunked(left, leftKeys), right = chunked(right, rightKeys))
    }

  // Only where rangejoin's shuffled join will run it (as RangeJoinStrategy decides): Spark's own
  // sort-merge join, where a side is too large for a task, splits skewed partitions only over
  // its own exchanges.
  private def perShufflePartition(join: Join): Boolean =
    BufferedSide.of(join, conf).isEmpty && BufferedSide.perShufflePartition(join, conf).isRight

  private def chunked(side: LogicalPlan, keys: Seq[Expression]): LogicalPlan =
    BinUnchunk(side.output, keys, BinChunks(keys, side))

  private def isChunked(side: LogicalPlan): Boolean = side.isInstanceOf[BinUnchunk]
}
