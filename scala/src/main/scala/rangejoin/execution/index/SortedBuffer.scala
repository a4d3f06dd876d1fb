package rangejoin.execution.index

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.ArrayData

import rangejoin.condition.KeyTypes

/**
 * The buffered side as it is broadcast: its rows in key order and the sorted keys the search runs
 * on, built once on the driver ([[SortedBuffer.build]]) and read in place by every task.
 * {{{
 *   rows(0 until keyed)    rows whose key is not NULL, ascending by key
 *   rows(keyed until n)    rows whose key is NULL: they match nothing, outer joins still emit them
 *   keys                   the `keyed` sorted keys, in KeyCodec's stored form
 *   origins                each row's position before sorting (stock Spark's broadcast order),
 *                          kept only for a join that may replay a row in that order (`keepOrigins`)
 *   secondKeys             for an interval index: each keyed row's other key, as an
 *                          order-preserving long, with the [[IntervalTree]] over them
 * }}}
 * With a second key, a row is keyed only when both keys are non-NULL: a NULL in either bound
 * matches nothing. With equality keys (`groups`, see [[KeyGroups]]), a row is keyed only when
 * its equality key has no NULL either, and the keyed rows are sorted by equality key first:
 * `keys` and `secondKeys` are sorted within each group's segment.
 * The rows travel as one byte stream ([[BroadcastRows]]), or, where the side's only column is its
 * integer key, not at all: they are the keys ([[KeyRows]]). Keys stored as longs and the second
 * keys travel packed ([[PackedLongs]]); the rest is Java- or Kryo-serialized.
 *
 * If the key expression raises an error on some row (an ANSI overflow, say), the rows keep their
 * original order and `isSorted` is false. The join then evaluates its whole condition pair by
 * pair, as BroadcastNestedLoopJoin does, so the error surfaces exactly when stock Spark would
 * raise it (and not, for example, when the other side is empty).
 */
private[rangejoin] final class SortedBuffer private[index] (
    payload: BufferRows,
    val isSorted: Boolean,
    keys: StoredKeys,
    origins: Array[Int],
    seconds: PackedLongs,
    val groups: Option[KeyGroups]) extends Serializable {

  /** The second keys, for an interval index: each keyed row's, in buffer order. */
  private[rangejoin] def secondKeys: Array[Long] = seconds.longs

  /** The interval tree over the second keys, built once per JVM that reads the broadcast. */
  @transient lazy val tree: IntervalTree =
    new IntervalTree(secondKeys, groups.map(_.starts).getOrElse(Array()))

  /** Fixed-width columns as arrays, for generated code: built per column on first use per JVM. */
  @transient lazy val columns: BufferedColumns = new BufferedColumns(rows)

  def rows: Array[InternalRow] = payload.rows

  def numRows: Int = payload.numRows

  def row(i: Int): InternalRow = rows(i)

  /** Whether the rows are the keys ([[KeyRows]]): built from them where they are read. */
  def rowsAreKeys: Boolean = payload.isInstanceOf[KeyRows]

  /** Whether the rows are built in this JVM: always, unless they are the keys and none was read. */
  def rowsBuilt: Boolean = payload match {
    case keys: KeyRows => keys.rowsBuilt
    case _ => true
  }

  /** Row i, a copy of its own, without building every row where they are the keys ([[KeyRows]]). */
  def copyOfRow(i: Int): InternalRow = payload.copyOf(i)

  /** Whether [[origin]] is known: the rows are unsorted, or their origins were kept. */
  def keepsOrigins: Boolean = !isSorted || origins.length == numRows

  /** Where row i was before sorting: its position in stock Spark's broadcast. */
  def origin(i: Int): Int = {
    require(keepsOrigins, "the buffer was built without its rows' origins")
    if (isSorted) origins(i) else i
  }

  /** The number of sorted non-NULL keys: the rows with a key. */
  def numKeys: Int = keys.size

  /**
   * The sorted keys of a type ordered as a long (an as-of join's times, a range join's long-coded
   * keys), the stored array itself.
   */
  def longKeys: Array[Long] = keys.longs

  /** The sorted keys of any other type, as their values. */
  def orderedKeys: ArrayData = keys match {
    case k: OrderedStoredKeys => k.values
    case _ => throw new IllegalStateException("keys stored as longs are read with longKeys")
  }

  /**
   * The sorted keys of an int or a date key, stored as themselves widened to longs, narrowed
   * back: the key column's values, for generated code that reads the column, without a pass
   * over the rows (which [[KeyRows]] would build first). Built once per JVM that reads them.
   */
  @transient lazy val intKeys: Array[Int] = {
    val longs = longKeys
    val out = new Array[Int](longs.length)
    var i = 0
    while (i < out.length) {
      out(i) = longs(i).toInt
      i += 1
    }
    out
  }
}

private[rangejoin] object SortedBuffer {

  /**
   * Sorts `rows` (UnsafeRows) by `key` (bound to the rows) into the payload described above;
   * with `secondKey` (of a type whose order is a long's), keeps each row's second key beside it;
   * with `groupKeys`, groups the rows by those equality keys first; with `keepOrigins`, keeps
   * each row's position before sorting.
   */
  def build(
      rows: Array[InternalRow],
      key: Expression,
      secondKey: Option[Expression] = None,
      groupKeys: Seq[Expression] = Nil,
      keepOrigins: Boolean = false): SortedBuffer = {
    val s = sorting(rows.length, i => rows(i), key, secondKey, groupKeys)
    if (!s.isSorted) return new SortedBuffer(new BroadcastRows(rows), false, s.keys, Array(), new PackedLongs(Array()), None)
    val sortedRows = new Array[InternalRow](s.order.length)
    var i = 0
    while (i < s.order.length) {
      sortedRows(i) = rows(s.order(i))
      i += 1
    }
    new SortedBuffer(new BroadcastRows(sortedRows), true, s.keys, if (keepOrigins) s.order else Array(),
      new PackedLongs(s.seconds), s.groups)
  }

  /** Row i of some rows; the object may be reused from one call to the next. */
  private[rangejoin] trait RowAt {
    def apply(i: Int): InternalRow
  }

  /**
   * Where each of `n` rows goes in the buffer, and the buffer's keys: everything [[build]] does
   * but move the rows. `order` lists the rows in their buffer order (keyed rows by key, then the
   * unkeyed ones); `keys` and `seconds` are the keyed rows' keys in that order. Unsorted (a key
   * raised an error), `order` is empty and there are no keys.
   */
  private[index] final class Sorting(
      val isSorted: Boolean,
      val order: Array[Int],
      val keys: StoredKeys,
      val seconds: Array[Long],
      val groups: Option[KeyGroups])

  private[index] def sorting(
      n: Int,
      rowAt: RowAt,
      key: Expression,
      secondKey: Option[Expression],
      groupKeys: Seq[Expression]): Sorting = {
    val codec = KeyCodec(key.dataType)
    val keys = codec.newColumn(n)
    val seconds = new Array[Long](if (secondKey.isDefined) n else 0)
    val unkeyed = new java.util.BitSet // a NULL second key or equality key
    val groupOf = new Array[Int](if (groupKeys.nonEmpty) n else 0)
    val numbering = if (groupKeys.nonEmpty) Some(KeyGroups.numbering(groupKeys)) else None
    val evaluated = try {
      val keyOf = UnsafeProjection.create(key +: secondKey.toSeq)
      val encodeSecond = secondKey.map(k => KeyTypes.longEncoder(k.dataType).getOrElse(
        throw new IllegalArgumentException(s"an interval index needs a key ordered as a long: $k")))
      // Nulls rather than Options inside the loop: a closure per row otherwise.
      val encode = encodeSecond.orNull
      val number = numbering.orNull
      var i = 0
      while (i < n) {
        val row = rowAt(i)
        val keyRow = keyOf(row)
        keys.set(i, keyRow)
        if (encode != null) {
          if (keyRow.isNullAt(1)) unkeyed.set(i) else seconds(i) = encode(keyRow, 1)
        }
        if (number != null) {
          groupOf(i) = number.groupOf(row)
          if (groupOf(i) < 0) unkeyed.set(i)
        }
        i += 1
      }
      true
    } catch {
      case NonFatal(_) => false // raised again, where Spark would raise it, by the pairwise join
    }
    if (!evaluated) return new Sorting(false, Array(), codec.newColumn(0).stored(Array()), Array(), None)
    val (keyedRows, unmatchable) = partition(n, i => !keys.isNull(i) && !unkeyed.get(i))
    val (keyed, groups) = numbering match {
      case None =>
        keys.sort(keyedRows)
        (keyedRows, None)
      case Some(g) =>
        val place = g.placement()
        if (place != null) {
          var j = 0
          while (j < keyedRows.length) {
            val i = keyedRows(j)
            groupOf(i) = place(groupOf(i))
            j += 1
          }
        }
        // Grouped first, then each group sorted: both stable, so ties keep their input order.
        val (grouped, starts) = byGroup(keyedRows, groupOf, g.numGroups)
        IndexSort.sortSegments(grouped, starts, keys)
        (grouped, Some(g.groups(starts, place)))
    }
    val sortedSeconds = new Array[Long](if (secondKey.isDefined) keyed.length else 0)
    var i = 0
    while (i < sortedSeconds.length) {
      sortedSeconds(i) = seconds(keyed(i))
      i += 1
    }
    new Sorting(true, keyed ++ unmatchable, keys.stored(keyed), sortedSeconds, groups)
  }

  // The loops here and below are written out: ArrayOps' map and partition box every Int.

  /** 0 until n split by `keyed`, each part in order. */
  private def partition(n: Int, keyed: Int => Boolean): (Array[Int], Array[Int]) = {
    val in = new Array[Int](n)
    val out = new Array[Int](n)
    var ins = 0
    var outs = 0
    var i = 0
    while (i < n) {
      if (keyed(i)) {
        in(ins) = i
        ins += 1
      } else {
        out(outs) = i
        outs += 1
      }
      i += 1
    }
    (java.util.Arrays.copyOf(in, ins), java.util.Arrays.copyOf(out, outs))
  }

  /**
   * `rows` (row indices) regrouped by group, stably: a counting sort, O(n + groups). Returns the
   * order and each group's start.
   */
  private def byGroup(rows: Array[Int], groupOf: Array[Int], numGroups: Int): (Array[Int], Array[Int]) = {
    val starts = new Array[Int](numGroups + 1)
    var j = 0
    while (j < rows.length) {
      starts(groupOf(rows(j)) + 1) += 1
      j += 1
    }
    var g = 0
    while (g < numGroups) {
      starts(g + 1) += starts(g)
      g += 1
    }
    val next = starts.clone()
    val grouped = new Array[Int](rows.length)
    j = 0
    while (j < rows.length) {
      val i = rows(j)
      grouped(next(groupOf(i))) = i
      next(groupOf(i)) += 1
      j += 1
    }
    (grouped, starts)
  }
}
