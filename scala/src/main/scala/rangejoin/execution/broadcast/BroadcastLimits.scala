package rangejoin.execution.broadcast

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.rangejoin.SparkInternals

/**
 * Spark's limits on what one broadcast may hold, applied to the sorted broadcast as
 * BroadcastExchangeExec applies them to its own, with the same errors: a hint or a wrong size
 * estimate then fails the query clearly instead of exhausting the driver's memory. The row count
 * is known before any row is decoded; the bytes are counted as rows are decoded, so an oversized
 * side fails as soon as it passes the limit.
 */
private[execution] object BroadcastLimits {

  /** Spark's row limit for a broadcast that is not a hash relation. */
  val MaxRows: Long = 512000000L

  final case class Collected(rows: Array[InternalRow], bytes: Long)

  /** Fails as Spark would if `numRows` rows of `bytes` in all (already collected) exceed the limits. */
  def check(numRows: Long, bytes: Long, maxBytes: Long, maxRows: Long = MaxRows): Unit = {
    if (numRows >= maxRows) throw SparkInternals.tooManyRowsToBroadcast(maxRows, numRows)
    if (bytes >= maxBytes) throw SparkInternals.tooManyBytesToBroadcast(maxBytes, bytes)
  }

  /**
   * The `numRows` rows of `rows`, within the limits: at most `maxRows` rows, and `maxBytes` bytes
   * (Spark's `spark.sql.maxBroadcastTableSize`). The rows are kept as they come, not copied: each
   * must be an UnsafeRow of its own (as `executeCollectIterator` decodes them), never a reused one.
   */
  def collect(numRows: Long, rows: Iterator[InternalRow], maxBytes: Long, maxRows: Long = MaxRows): Collected = {
    if (numRows >= maxRows) throw SparkInternals.tooManyRowsToBroadcast(maxRows, numRows)
    val out = new Array[InternalRow](numRows.toInt)
    var n = 0
    var bytes = 0L
    rows.foreach { row =>
      bytes += row.asInstanceOf[UnsafeRow].getSizeInBytes
      if (bytes >= maxBytes) throw SparkInternals.tooManyBytesToBroadcast(maxBytes, bytes)
      out(n) = row
      n += 1
    }
    Collected(if (n == out.length) out else out.take(n), bytes)
  }
}
