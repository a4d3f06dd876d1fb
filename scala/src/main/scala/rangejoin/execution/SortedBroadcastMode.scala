package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.physical.BroadcastMode

/**
 * Broadcasts the buffered side sorted by `key` (bound to the buffered output), as a
 * [[SortedBuffer]] payload: BroadcastExchangeExec calls `transform` once, on the driver, so the
 * sort happens once per broadcast rather than once per task. Two joins share a broadcast only
 * when they sort the same side by the same key.
 */
final case class SortedBroadcastMode(key: Expression) extends BroadcastMode {

  override def transform(rows: Array[InternalRow]): Array[InternalRow] =
    SortedBuffer.build(rows, key)

  override def transform(rows: Iterator[InternalRow], sizeHint: Option[Long]): Array[InternalRow] =
    transform(rows.toArray)

  override def canonicalized: BroadcastMode = copy(key = key.canonicalized)
}
