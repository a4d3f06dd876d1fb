package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow

/**
 * The buffered rows of a [[SortedBuffer]], as it holds them: the rows themselves
 * ([[BroadcastRows]]), or, for a side whose only column is its integer sort key, the sorted
 * keys that are those rows ([[KeyRows]]).
 */
private[rangejoin] trait BufferRows extends Serializable {
  def numRows: Int

  /** Every row, in buffer order. */
  def rows: Array[InternalRow]

  /** Row i, a copy of its own; for [[KeyRows]] without building every row. */
  def copyOf(i: Int): InternalRow
}
