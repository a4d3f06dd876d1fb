package rangejoin.bins

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Statistics, UnaryNode}
import org.apache.spark.sql.types.{BinaryType, IntegerType}

/**
 * A binned join's side shuffled in chunks ([[ChunkedBinShuffle]]): `BinChunks` packs the child's
 * rows, grouped by the partition Spark's hash partitioning on `keys` gives them, into chunks of
 * many rows each, one row `(partition, chunk)` a chunk; its exchange sends each chunk to that
 * partition; `BinUnchunk` hands the rows back out, partitioned exactly as Spark's own exchange on
 * `keys` would have left them.
 * {{{
 *   BinUnchunk [rows] by keys          rows, hash-partitioned on keys
 *   +- BinChunks keys [partition, chunk]   planned with its exchange: one shuffled row a chunk
 *      +- (the side, copied to its bins)
 * }}}
 * Spark's shuffle costs about as much a row as W12's join does (it writes and reads a length and
 * boxes a partition id for every row); a chunk pays that once for hundreds of rows.
 * ([[rangejoin.execution.BinChunksExec]] and [[rangejoin.execution.BinUnchunkExec]] run them;
 * [[rangejoin.planning.BinChunksStrategy]] plans them.)
 */
private[rangejoin] case class BinChunks(keys: Seq[Expression], partition: Attribute, chunk: Attribute, child: LogicalPlan)
  extends UnaryNode {

  override def output: Seq[Attribute] = Seq(partition, chunk)

  override def producedAttributes: AttributeSet = AttributeSet(output)

  override protected def withNewChildInternal(newChild: LogicalPlan): BinChunks = copy(child = newChild)
}

private[rangejoin] object BinChunks {
  def apply(keys: Seq[Expression], child: LogicalPlan): BinChunks = BinChunks(keys,
    AttributeReference("rangejoin_partition", IntegerType, nullable = false)(),
    AttributeReference("rangejoin_chunk", BinaryType, nullable = false)(), child)
}

/** See [[BinChunks]]: the rows `rows` (its child's child's output) out of their chunks. */
private[rangejoin] case class BinUnchunk(rows: Seq[Attribute], keys: Seq[Expression], child: LogicalPlan)
  extends UnaryNode {

  override def output: Seq[Attribute] = rows

  // The rows come out of the chunks, not from the child's columns.
  override def producedAttributes: AttributeSet = AttributeSet(rows)

  // The chunks' size is the rows' (and 8 bytes a row); their count is not: once adaptive
  // execution has run the shuffle, its stage counts chunks.
  override def stats: Statistics = child match {
    case chunks: BinChunks => chunks.child.stats
    case stage => Statistics(sizeInBytes = stage.stats.sizeInBytes)
  }

  override protected def withNewChildInternal(newChild: LogicalPlan): BinUnchunk = copy(child = newChild)
}
