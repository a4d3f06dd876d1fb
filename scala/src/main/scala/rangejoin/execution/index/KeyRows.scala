package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.rangejoin.KnownSize
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import rangejoin.condition.KeyTypes

/**
 * The rows of a side whose only column is its sort key, of an integer type stored as itself
 * ([[KeyRows.supports]]): row i of the buffer is the key `keys(i)`, and the rows past the keys
 * are the NULL-keyed ones. Only the count travels; the keys are the buffer's own (one object, so
 * serialized once). The rows are built, as UnsafeRows packed like [[BroadcastRows]]' and byte for
 * byte those the side's scan produced, the first time a JVM reads them: a join that reads the
 * column from the sorted keys themselves (generated code does) never builds them.
 * {{{
 *   keys     [ 3, 5, 5, 9 ]            numRows 6
 *   rows     [3] [5] [5] [9] [NULL] [NULL]
 * }}}
 * What it saves is the rows' packing in each task, their bytes through the task results and the
 * broadcast, and a row object each on the driver: W2's 1M-row side (docs/design.md, "A side
 * that is its key").
 */
private[rangejoin] final class KeyRows(val numRows: Int, keyType: DataType, keys: PackedLongs)
  extends BufferRows with KnownSize {
  require(KeyRows.supports(keyType), s"no rows from keys of $keyType")

  // The value's width in bytes, rather than the type: Kryo would rebuild a type object that no
  // pattern matches.
  private[this] val width: Int = keyType.defaultSize

  // Whether this JVM has built the rows: a join whose generated code reads every column from
  // arrays never should (CodegenSuite checks it).
  @transient @volatile private[this] var built = false

  def rowsBuilt: Boolean = built

  @transient lazy val rows: Array[InternalRow] = {
    built = true
    val out = new Array[InternalRow](numRows)
    var i = 0
    while (i < numRows) {
      val chunk = new Array[Byte](math.min(numRows - i, KeyRows.RowsPerChunk) * KeyRows.RowSize)
      var offset = 0
      while (offset < chunk.length) {
        out(i) = write(i, chunk, offset)
        offset += KeyRows.RowSize
        i += 1
      }
    }
    out
  }

  override def copyOf(i: Int): InternalRow = write(i, new Array[Byte](KeyRows.RowSize), 0)

  /** Row i's bytes at `offset` of `bytes` (zeroed), as the row read there. */
  private def write(i: Int, bytes: Array[Byte], offset: Int): UnsafeRow = {
    val row = new UnsafeRow(1)
    row.pointTo(bytes, Platform.BYTE_ARRAY_OFFSET + offset, KeyRows.RowSize)
    // An UnsafeRow holds a narrower integer in its 8-byte slot's low bytes, the rest zero.
    if (i >= keys.size) row.setNullAt(0) else KeyRows.set(row, width, keys.longs(i))
    row
  }

  /** What the rows take once built (as [[BroadcastRows.estimatedSize]] counts them); the keys are counted with the buffer. */
  override def estimatedSize: Long = 16L + numRows.toLong * (4 + KeyRows.RowSize + BroadcastRows.RowObjectSize)
}

private[rangejoin] object KeyRows {
  /** A one-field UnsafeRow: its null bits, then the value. */
  val RowSize: Int = 16

  // Arrays of 256 KB, as BroadcastRows packs rows (its ChunkSize says why).
  private val RowsPerChunk: Int = BroadcastRows.ChunkSize / RowSize

  /**
   * Whether rows of one column of this type are their stored keys (KeyCodec's long, with no
   * folding): the integer types, dates and timestamps.
   */
  def supports(keyType: DataType): Boolean = KeyTypes.integral(keyType)

  /** Sets field 0 of `row` to the value `width` bytes wide (a supported type's) whose stored key is `v`. */
  def set(row: InternalRow, width: Int, v: Long): Unit = width match {
    case 1 => row.setByte(0, v.toByte)
    case 2 => row.setShort(0, v.toShort)
    case 4 => row.setInt(0, v.toInt)
    case 8 => row.setLong(0, v)
  }
}
