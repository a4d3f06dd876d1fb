package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, SpecificInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.{LongType, StructType}
import org.apache.spark.unsafe.Platform

import rangejoin.condition.KeyTypes

/**
 * The sorted broadcast built where the rows are: each partition of the buffered side sorts its
 * own rows into a [[SortedPartition]] (on an executor, in parallel with the others), and the driver
 * merges the runs by key. The driver never sorts, and never reads a row out of order: each run's
 * rows arrive already in key order, packed side by side, and the merge reads every run front to
 * back. (A million rows gathered in sorted order from wherever the collect left them cost the
 * driver a cache miss or two each, more than the sort itself.)
 * {{{
 *   partition 0 (rows 0..2):   keys 3 5 9   origins 1 0 2
 *   partition 1 (rows 3..5):   keys 1 5 7   origins 2 0 1
 *   merged:                    keys 1 3 5 5 7 9      equal keys: the lower partition first
 *                              origins 5 1 0 3 4 2   a run's origin + the rows before its partition
 * }}}
 * Each run is a stable sort of its partition ([[SortedBuffer.build]]), and ties go to the lower
 * partition, so the merge is exactly the stable sort of the rows in the order Spark collects
 * them: the buffer [[SortedBuffer.build]] makes from the collected rows, row for row. Rows
 * without a key follow, partition by partition, in collected order. If a key raised an error in
 * any partition, the buffer is the unsorted one, every row in collected order, as `build` makes.
 *
 * Only keys stored as longs ([[KeyCodec]]) without equality keys are merged: equality keys number
 * their groups per partition, and other keys compare through Spark's ordering. Those sides are
 * collected and sorted on the driver.
 */
private[rangejoin] object SortedPartitions {

  def supports(key: Expression, groupKeys: Seq[Expression]): Boolean =
    groupKeys.isEmpty && KeyCodec(key.dataType).storedType == LongType

  /**
   * One partition's run, made where the partition is: its rows (of `schema`; a reused row is
   * fine) packed as they come, sorted by `key` in place (no row object each), then packed again
   * in key order.
   */
  def sort(rows: Iterator[InternalRow], schema: StructType, key: Expression,
      secondKey: Option[Expression]): SortedPartition =
    sortAtMost(Int.MaxValue, rows, schema, key, secondKey).get

  /**
   * Whether a side of `schema` sorted by `key` travels as its keys alone ([[KeyRows]]): its only
   * column is the key, of an integer type.
   */
  def keyOnly(key: Expression, schema: StructType): Boolean = key match {
    case BoundReference(0, dataType, _) => schema.length == 1 && KeyRows.supports(dataType)
    case _ => false
  }

  /**
   * The run of a partition of at most `maxRows` rows, or None, having read `maxRows + 1` rows and
   * sorted none, for a larger one: a side that would not be worth broadcasting
   * ([[rangejoin.execution.sideswitch.SideSwitchExec]]) costs at most that much to find out.
   * Where the rows are their keys ([[keyOnly]]), only the keys are kept, and no row is packed.
   */
  def sortAtMost(maxRows: Int, rows: Iterator[InternalRow], schema: StructType, key: Expression,
      secondKey: Option[Expression]): Option[SortedPartition] =
    if (secondKey.isEmpty && keyOnly(key, schema)) sortKeysAtMost(maxRows, rows, key)
    else sortRowsAtMost(maxRows, rows, schema, key, secondKey)

  private def sortRowsAtMost(maxRows: Int, rows: Iterator[InternalRow], schema: StructType,
      key: Expression, secondKey: Option[Expression]): Option[SortedPartition] = {
    val toUnsafe = UnsafeProjection.create(schema)
    val copies = new PackedRows(-1)
    while (rows.hasNext) {
      if (copies.numRows >= maxRows) return None
      copies.add(rows.next() match {
        case u: UnsafeRow => u
        case other => toUnsafe(other)
      })
    }
    val n = copies.numRows
    val at = copies.rowAt(schema.length)
    val sorted = SortedBuffer.sorting(n, at, key, secondKey, Nil)
    val order = if (sorted.isSorted) sorted.order else Array.range(0, n)
    val packed = new PackedRows(copies.bytes)
    var i = 0
    while (i < n) {
      packed.add(at(order(i)).asInstanceOf[UnsafeRow])
      i += 1
    }
    Some(new SortedPartition(n, schema.length, sorted.isSorted, sorted.keys.longs, sorted.seconds,
      order, packed.sizes, packed.chunks))
  }

  /**
   * The run of a side whose rows are their keys: each key read once into a long (a NULL into a
   * bit), and sorted by [[SortedBuffer.sorting]] as the rows would be, over one reused row.
   */
  private def sortKeysAtMost(maxRows: Int, rows: Iterator[InternalRow], key: Expression): Option[SortedPartition] = {
    val encode = KeyTypes.longEncoder(key.dataType).get
    var values = new Array[Long](1024)
    val nulls = new java.util.BitSet
    var n = 0
    while (rows.hasNext) {
      if (n >= maxRows) return None
      val row = rows.next()
      if (n == values.length) values = java.util.Arrays.copyOf(values, math.min(2L * n, Int.MaxValue - 8L).toInt)
      if (row.isNullAt(0)) nulls.set(n) else values(n) = encode(row, 0)
      n += 1
    }
    val keyRow = new SpecificInternalRow(Seq(key.dataType))
    val sorted = SortedBuffer.sorting(n, i => {
      if (nulls.get(i)) keyRow.setNullAt(0) else KeyRows.set(keyRow, key.dataType.defaultSize, values(i))
      keyRow
    }, key, None, Nil)
    // A column read as itself cannot raise an error.
    assert(sorted.isSorted, s"$key raised an error")
    Some(new SortedPartition(n, 1, isSorted = true, sorted.keys.longs, Array(), sorted.order,
      Array(), Array(), keyOnly = true))
  }

  /**
   * The runs of every partition, in partition order, merged into the side's buffer; with
   * `keepOrigins`, it keeps each row's position in the collected order.
   */
  def merge(
      runs: Array[SortedPartition],
      key: Expression,
      secondKey: Option[Expression],
      keepOrigins: Boolean): SortedBuffer = {
    require(supports(key, Nil), s"runs sorted by $key are not merged")
    if (runs.exists(!_.isSorted)) return SortedBuffer.build(collectedOrder(runs), key, secondKey, Nil, keepOrigins)
    val keyOnly = runs.nonEmpty && runs(0).keyOnly
    require(runs.forall(_.keyOnly == keyOnly), "runs of rows and runs of keys alone")
    val offsets = runs.scanLeft(0)(_ + _.numRows)
    val n = offsets.last
    val numKeyed = runs.iterator.map(_.keys.length).sum
    val readers = if (keyOnly) null else runs.map(_.reader)
    val rows = new Array[InternalRow](if (keyOnly) 0 else n)
    val origins = new Array[Int](if (keepOrigins) n else 0)
    val keys = new Array[Long](numKeyed)
    val seconds = new Array[Long](if (secondKey.isDefined) numKeyed else 0)
    val heads = new PartitionHeads(runs.map(_.keys))
    var out = 0
    while (out < numKeyed) {
      val r = heads.first
      val i = heads.position(r)
      if (!keyOnly) rows(out) = readers(r).next()
      if (keepOrigins) origins(out) = offsets(r) + runs(r).origins(i)
      keys(out) = runs(r).keys(i)
      if (seconds.length > 0) seconds(out) = runs(r).seconds(i)
      heads.advance()
      out += 1
    }
    var r = 0
    while (r < runs.length) {
      var i = runs(r).keys.length
      while (i < runs(r).numRows) {
        if (!keyOnly) rows(out) = readers(r).next()
        if (keepOrigins) origins(out) = offsets(r) + runs(r).origins(i)
        out += 1
        i += 1
      }
      r += 1
    }
    val stored = new PackedLongs(keys)
    val payload = if (keyOnly) new KeyRows(n, key.dataType, stored) else new BroadcastRows(rows)
    new SortedBuffer(payload, true, stored, origins, new PackedLongs(seconds), None)
  }

  /** The bytes of the runs' rows: what Spark's limit on a broadcast's size counts. */
  def dataSize(runs: Array[SortedPartition]): Long = runs.iterator.map(_.dataSize).sum

  /** Every row, in the order Spark collects them: partition by partition, each in its own order. */
  private def collectedOrder(runs: Array[SortedPartition]): Array[InternalRow] = runs.flatMap { run =>
    val inOrder = new Array[InternalRow](run.numRows)
    val reader = run.reader
    var i = 0
    while (i < run.numRows) {
      inOrder(run.origins(i)) = reader.next()
      i += 1
    }
    inOrder
  }
}

/**
 * One partition's rows as its task returns them: in the order of its [[SortedBuffer]] (the keyed
 * rows by key, then the unkeyed ones), with their `keys`, `seconds` (second keys, if any) and
 * `origins` (positions in the partition). The rows' bytes are packed into `chunks` by
 * [[PackedRows]]'s rule, and `sizes` tells where each one ends; a run of rows that are their keys
 * ([[SortedPartitions.keyOnly]], `keyOnly`) has neither. Unsorted (a key raised an error), the rows are in
 * partition order and there are no keys.
 */
private[rangejoin] final class SortedPartition(
    val numRows: Int,
    val numFields: Int,
    val isSorted: Boolean,
    val keys: Array[Long],
    val seconds: Array[Long],
    val origins: Array[Int],
    val sizes: Array[Int],
    val chunks: Array[Array[Byte]],
    val keyOnly: Boolean = false) extends Serializable {

  /** The rows' bytes, as UnsafeRows: what Spark's limit on a broadcast's size counts. */
  def dataSize: Long =
    if (keyOnly) numRows.toLong * KeyRows.RowSize
    else {
      var bytes = 0L
      var i = 0
      while (i < sizes.length) {
        bytes += sizes(i)
        i += 1
      }
      bytes
    }

  /** The rows, in order, each read in place from its chunk. */
  def reader: PackedRows.Reader = new PackedRows.Reader(numFields, sizes, chunks)
}

/**
 * Rows (UnsafeRows) copied side by side into byte arrays of [[BroadcastRows.ChunkSize]], in the
 * order they are added; a row never spans two arrays, and one larger than an array gets its own.
 * Arrays that small are ordinary young objects to G1, where one large array is a humongous one
 * whose allocation can start a collection. `total`, the bytes to come if known (else -1), trims
 * the last array.
 */
private[rangejoin] final class PackedRows(total: Long) {
  private[this] val full = scala.collection.mutable.ArrayBuffer.empty[Array[Byte]]
  private[this] var chunk: Array[Byte] = null
  private[this] var used = 0
  private[this] var remaining = if (total < 0) Long.MaxValue else total
  // Where each row went: its array's number, its offset there, and its size.
  private[this] val chunkOf = new PackedRows.Ints
  private[this] val offsetOf = new PackedRows.Ints
  private[this] val sizeOf = new PackedRows.Ints
  private[this] var added = 0
  private[this] var addedBytes = 0L

  /** Copies `row`'s bytes in, after the last row's. */
  def add(row: UnsafeRow): Unit = {
    val size = row.getSizeInBytes
    if (chunk == null || used + size > chunk.length) {
      if (chunk != null) full += chunk
      chunk = new Array[Byte](math.max(size.toLong, math.min(remaining, BroadcastRows.ChunkSize.toLong)).toInt)
      used = 0
    }
    Platform.copyMemory(row.getBaseObject, row.getBaseOffset, chunk, Platform.BYTE_ARRAY_OFFSET + used, size)
    chunkOf.add(full.length)
    offsetOf.add(used)
    sizeOf.add(size)
    added += 1
    addedBytes += size
    used += size
    remaining -= size
  }

  def numRows: Int = added

  def bytes: Long = addedBytes

  /** Each row's size, in the order added. */
  def sizes: Array[Int] = sizeOf.result()

  def chunks: Array[Array[Byte]] = (if (chunk == null) full else full :+ chunk).toArray

  /** The rows added so far, by number, each read in place through one reused row object. */
  def rowAt(numFields: Int): SortedBuffer.RowAt = new SortedBuffer.RowAt {
    private[this] val arrays = chunks
    private[this] val chunkNo = chunkOf.result()
    private[this] val offsets = offsetOf.result()
    private[this] val sizes = sizeOf.result()
    private[this] val row = new UnsafeRow(numFields)
    def apply(i: Int): UnsafeRow = {
      row.pointTo(arrays(chunkNo(i)), Platform.BYTE_ARRAY_OFFSET + offsets(i), sizes(i))
      row
    }
  }
}

private[rangejoin] object PackedRows {

  /**
   * Ints appended one at a time, unboxed: 2.13's `ArrayBuilder.ofInt` takes them through
   * Growable's generic `+=` (boxing three per row here), and 2.12's has no `addOne`.
   */
  private final class Ints {
    private[this] var values = new Array[Int](64)
    private[this] var n = 0

    def add(v: Int): Unit = {
      if (n == values.length) values = java.util.Arrays.copyOf(values, math.min(n.toLong * 2, Int.MaxValue - 8L).toInt)
      values(n) = v
      n += 1
    }

    def result(): Array[Int] = java.util.Arrays.copyOf(values, n)
  }

  /** Reads rows packed by [[PackedRows]] back, in order, pointing into the arrays (no copy). */
  final class Reader(numFields: Int, sizes: Array[Int], chunks: Array[Array[Byte]]) {
    private[this] var row = 0
    private[this] var chunk = 0
    private[this] var used = 0

    def next(): UnsafeRow = {
      val size = sizes(row)
      if (used + size > chunks(chunk).length) {
        chunk += 1
        used = 0
      }
      val out = new UnsafeRow(numFields)
      out.pointTo(chunks(chunk), Platform.BYTE_ARRAY_OFFSET + used, size)
      used += size
      row += 1
      out
    }
  }
}

/**
 * The merge's choice of the next row: a binary min-heap of the runs not yet exhausted, ordered by
 * their next key, then by run number (so equal keys come out in partition order).
 */
private final class PartitionHeads(keys: Array[Array[Long]]) {
  val position: Array[Int] = new Array[Int](keys.length)
  private[this] val heap = (0 until keys.length).filter(keys(_).length > 0).toArray
  private[this] var size = heap.length

  private def before(a: Int, b: Int): Boolean = {
    val c = java.lang.Long.compare(keys(a)(position(a)), keys(b)(position(b)))
    c < 0 || (c == 0 && a < b)
  }

  private def siftDown(from: Int): Unit = {
    var i = from
    var done = false
    while (!done) {
      val l = 2 * i + 1
      val r = l + 1
      var least = i
      if (l < size && before(heap(l), heap(least))) least = l
      if (r < size && before(heap(r), heap(least))) least = r
      if (least == i) done = true
      else {
        val t = heap(i)
        heap(i) = heap(least)
        heap(least) = t
        i = least
      }
    }
  }

  {
    var i = size / 2 - 1
    while (i >= 0) {
      siftDown(i)
      i -= 1
    }
  }

  /** The run whose next row comes first; only while some run has rows left. */
  def first: Int = heap(0)

  /** Takes the first run's row: its next one, if any, takes its place in the order. */
  def advance(): Unit = {
    val r = heap(0)
    position(r) += 1
    if (position(r) == keys(r).length) {
      size -= 1
      heap(0) = heap(size)
    }
    siftDown(0)
  }
}
