package rangejoin.execution.broadcast

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}

import rangejoin.condition.Extreme
import rangejoin.execution.index.SortedBuffer

/**
 * What the driver needs of a sorted broadcast, kept beside it when it is built: the broadcast
 * itself is serialized only ([[SortedBroadcastExec]]), and reading its value on the driver would
 * deserialize a copy of the whole buffered side for these few facts.
 *
 * @param isSorted whether the buffer is sorted (no buffered key raised an error)
 * @param numRows  the buffered rows
 * @param first    the first keyed row (the smallest sort key) of a sorted buffer without key groups
 * @param last     the last keyed row (the largest)
 */
private[rangejoin] final case class BufferSummary(
    isSorted: Boolean,
    numRows: Int,
    first: Option[InternalRow],
    last: Option[InternalRow]) {

  /** The row with the extreme sort key `extreme` asks for; None when no row has a key. */
  def extremeRow(extreme: Extreme): Option[InternalRow] = extreme match {
    case Extreme.Max => last
    case Extreme.Min => first
  }

  /** `key` (bound to the buffered rows) of the row with the extreme sort key; None when no row has a key. */
  def extremeKey(extreme: Extreme, key: Expression): Option[Literal] =
    extremeRow(extreme).map(row => Literal(InternalRow.copyValue(key.eval(row)), key.dataType))
}

private[rangejoin] object BufferSummary {
  def of(buffer: SortedBuffer): BufferSummary = {
    val keyed = if (buffer.isSorted && buffer.groups.isEmpty) buffer.numKeys else 0
    BufferSummary(buffer.isSorted, buffer.numRows,
      if (keyed > 0) Some(buffer.copyOfRow(0)) else None,
      if (keyed > 0) Some(buffer.copyOfRow(keyed - 1)) else None)
  }
}
