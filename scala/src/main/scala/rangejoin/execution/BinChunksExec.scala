package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, BindReferences, Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}

/**
 * Runs [[rangejoin.bins.BinChunks]]: the child's rows packed into chunks by the partition that
 * Spark's hash partitioning on `keys` into `numPartitions` gives them
 * ([[ChunkedRows.Chunker]]); the exchange above ([[rangejoin.planning.BinChunksStrategy]]) is
 * Spark's, on the chunk's `partition` key.
 */
private[rangejoin] case class BinChunksExec(
    keys: Seq[Expression],
    numPartitions: Int,
    partition: Attribute,
    chunk: Attribute,
    child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = Seq(partition, chunk)

  override def producedAttributes: AttributeSet = AttributeSet(output)

  override def nodeName: String = "RangeJoinBinChunks"

  protected override def doExecute(): RDD[InternalRow] = {
    val (inputs, n) = (child.output, numPartitions)
    val partitionId = HashPartitioning(keys, n).partitionIdExpression
    val capacity = ChunkedRows.chunkBytes(n)
    child.execute().mapPartitions { rows =>
      new ChunkedRows.Chunker(rows, BindReferences.bindReference(partitionId, inputs), n, capacity,
        UnsafeProjection.create(inputs, inputs))
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BinChunksExec = copy(child = newChild)
}

/**
 * Runs [[rangejoin.bins.BinUnchunk]]: the rows out of the chunks the exchange below delivered
 * ([[ChunkedRows.Unchunker]]). They are where Spark's hash partitioning on `keys` puts them, so
 * this reports that partitioning wherever its child reports hash partitioning on the chunks'
 * key: the exchange's own, or its partitions coalesced by adaptive execution (as Spark's
 * coalesced shuffle read reports its own); otherwise none.
 */
private[rangejoin] case class BinUnchunkExec(rows: Seq[Attribute], keys: Seq[Expression], child: SparkPlan)
  extends UnaryExecNode {

  override def output: Seq[Attribute] = rows

  override def producedAttributes: AttributeSet = AttributeSet(rows)

  override def nodeName: String = "RangeJoinBinUnchunk"

  override def outputPartitioning: Partitioning = child.outputPartitioning match {
    case h: HashPartitioning => HashPartitioning(keys, h.numPartitions)
    case other => UnknownPartitioning(other.numPartitions)
  }

  protected override def doExecute(): RDD[InternalRow] = {
    val width = rows.size
    child.execute().mapPartitions(chunks => new ChunkedRows.Unchunker(chunks, width))
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BinUnchunkExec = copy(child = newChild)
}
