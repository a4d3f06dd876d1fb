package rangejoin.execution.driver

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.types.DataType
import org.apache.spark.unsafe.Platform

import rangejoin.condition.LongEncoder
import rangejoin.execution.index.IndexSort

/**
 * A shuffled per-key join's streamed rows, reordered chunk by chunk so that each chunk meets the
 * buffer's key groups in ascending key order, the order the buffer lays them out in
 * ([[rangejoin.execution.index.KeyGroups]]):
 * {{{
 *   shuffle order      k=7  k=2  k=9  k=2  k=5 | k=3 ...      (random over the whole buffer)
 *   chunk, clustered   k=2  k=2  k=5  k=7  k=9 | ...          (the buffer read front to back)
 * }}}
 * A task's buffer is larger than a core's cache where this matters (W12's binned joins: ~5 MB of
 * keys and segments a task), and rows in shuffle order read it at random: a cache miss for the
 * key's segment, and one for each key array the search reads. In key order consecutive rows
 * search neighbouring segments, and the chunk's searches sweep the buffer once.
 *
 * The rows of a chunk are copied into one page, then in key order into another, and handed out
 * as one reused row, pointed at each in turn: as any input iterator's, a row is valid until the
 * next is asked for (`hasNext` reads the next chunk into the third page, not the current row's). A
 * NULL key sorts as the smallest long (it finds no group). The order within a partition is nothing a
 * join promises ([[rangejoin.execution.ShuffledPiecewiseMergeJoinExec]] reports no ordering),
 * and each streamed row is joined on its own, so the answer is the same.
 */
private[rangejoin] final class KeyClusteredRows(
    rows: Iterator[InternalRow],
    ordinal: Int,
    encode: LongEncoder,
    schema: Seq[DataType],
    clusteredRows: SQLMetric) extends Iterator[InternalRow] {

  import KeyClusteredRows.{ChunkBytes, ChunkRows}

  private[this] lazy val toUnsafe = UnsafeProjection.create(schema.toArray)
  private[this] val out = new UnsafeRow(schema.length)
  private[this] var page = new Array[Byte](1 << 16)
  private[this] var sorted = new Array[Byte](1 << 16)
  private[this] var spare = new Array[Byte](1 << 16)
  // Where the i-th row of the chunk as read starts in `page`, and the j-th in key order in
  // `sorted`; each row ends where the next begins.
  private[this] val offsets = new Array[Int](ChunkRows + 1)
  private[this] val starts = new Array[Int](ChunkRows + 1)
  private[this] val keys = new Array[Long](ChunkRows)
  private[this] val order = new Array[Int](ChunkRows)
  private[this] val sorter = new IndexSort.LongSort(ChunkRows)
  private[this] var count = 0
  private[this] var next_ = 0

  override def hasNext: Boolean = next_ < count || fill()

  override def next(): InternalRow = {
    if (!hasNext) throw new NoSuchElementException
    out.pointTo(sorted, Platform.BYTE_ARRAY_OFFSET + starts(next_), starts(next_ + 1) - starts(next_))
    next_ += 1
    out
  }

  /** Reads the next chunk and orders it; false when no row is left. */
  private def fill(): Boolean = {
    count = 0
    next_ = 0
    var used = 0
    while (count < ChunkRows && used < ChunkBytes && rows.hasNext) {
      val row = rows.next() match {
        case u: UnsafeRow => u
        case other => toUnsafe(other)
      }
      val size = row.getSizeInBytes
      if (used + size > page.length) {
        page = java.util.Arrays.copyOf(page, math.max(page.length * 2, used + size))
      }
      row.writeToMemory(page, Platform.BYTE_ARRAY_OFFSET + used)
      offsets(count) = used
      used += size
      keys(count) = if (row.isNullAt(ordinal)) Long.MinValue else encode(row, ordinal)
      count += 1
    }
    offsets(count) = used
    var i = 0
    while (i < count) {
      order(i) = i
      i += 1
    }
    sorter.sort(order, count, keys)
    gather(used)
    clusteredRows += count
    count > 0
  }

  /**
   * Copies the chunk's rows in their order into the spare page, which becomes `sorted`, and
   * records in `starts` where each begins there.
   * The copies read the page at random, but independently of each other, so the core overlaps
   * their misses; read in place in the join, each would stall the search that follows it.
   */
  private def gather(used: Int): Unit = {
    if (spare.length < used) spare = new Array[Byte](page.length)
    val into = spare
    spare = sorted
    sorted = into
    var at = 0
    var j = 0
    while (j < count) {
      val i = order(j)
      val size = offsets(i + 1) - offsets(i)
      starts(j) = at
      System.arraycopy(page, offsets(i), into, at, size)
      at += size
      j += 1
    }
    starts(count) = at
  }
}

private[rangejoin] object KeyClusteredRows {

  /**
   * Rows a chunk holds, and bytes (a chunk of wide rows holds fewer). Measured on W12's binned
   * joins (docs/design.md, "Streamed rows in key order"): chunks of 16K to 64K rows save the
   * same, 4K rows nothing (too few rows to each part of a 100K-row buffer).
   */
  val ChunkRows: Int = 16384
  val ChunkBytes: Int = 4 << 20

  /**
   * Whether a task's buffer is worth meeting in key order: more buffered rows than a core's
   * cache holds keys of (16 bytes a row, with an interval index's second key, against 1 MB of
   * L2), in enough groups that the lookup's table is as large. Below that, rows in any order
   * find the buffer in cache, and the copies would only cost.
   */
  def worthIt(bufferedRows: Int, groups: Int): Boolean = bufferedRows >= MinBufferedRows && groups >= MinGroups

  val MinBufferedRows: Int = 32768
  val MinGroups: Int = 1024
}
