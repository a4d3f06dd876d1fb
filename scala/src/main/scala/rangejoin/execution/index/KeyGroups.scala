package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types._

import rangejoin.condition.{KeyTypes, LongEncoder}

/**
 * The per-key index's segments: under equality keys the buffer's keyed rows are grouped by their
 * equality key, and sorted by the range key within each group, so every search runs in one
 * segment, found by one lookup of the streamed row's equality key.
 * {{{
 *   equality key   chr1            chr2        chr3
 *   range key      2  5  5  9      1  4        7  8  8
 *   positions      0  1  2  3      4  5        6  7  8
 *   starts         0               4           6          9
 * }}}
 * Keys compare as BroadcastHashJoin's do: as UnsafeRows, byte for byte (Spark's optimizer has
 * already normalized floating-point keys, and rewritten collated strings to their collation
 * keys), and a key with a NULL field matches nothing (`<=>` keys reach the join NULL-free).
 * One integral, date or timestamp column ([[LongKeyGroups]]) is equal exactly when its longs
 * are: it is kept and looked up as a long, as Spark's LongHashedRelation does.
 *
 * `starts`: group g holds positions [starts(g), starts(g + 1)); one more entry than groups.
 */
private[rangejoin] sealed abstract class KeyGroups(val starts: Array[Int]) extends Serializable {
  def numGroups: Int = starts.length - 1
}

/** Each group's key as a long ([[encoder]]'s), by group number. */
private[rangejoin] final class LongKeyGroups(keys: Array[Long], starts: Array[Int], keyType: DataType)
  extends KeyGroups(starts) {
  require(starts.length == keys.length + 1)

  def encoder: LongEncoder = KeyTypes.longEncoder(keyType).get

  /** Built once per JVM that reads the broadcast. */
  @transient private lazy val lookup: LongToSegment = LongToGroup(keys).segments(starts)

  /** The segment of a key read as a long, packed ([[KeyGroups.segment]]); empty when no group has it. */
  def segment(key: Long): Long = lookup.get(key)
}

/** Each group's key row, by group number. */
private[rangejoin] final class RowKeyGroups(keys: BroadcastRows, starts: Array[Int]) extends KeyGroups(starts) {
  require(starts.length == keys.rows.length + 1)

  /** Built once per JVM that reads the broadcast. */
  @transient private lazy val lookup: java.util.HashMap[UnsafeRow, Integer] = {
    val map = new java.util.HashMap[UnsafeRow, Integer](math.max(16, numGroups * 2))
    var g = 0
    while (g < numGroups) {
      map.put(keys.rows(g).asInstanceOf[UnsafeRow], g)
      g += 1
    }
    map
  }

  /** The segment of `key` (an UnsafeRow of the equality keys), packed ([[KeyGroups.segment]]). */
  def segment(key: UnsafeRow): Long = KeyGroups.segment(starts, group(key))

  /** The group of `key`, or -1 when no keyed row has it. */
  private def group(key: UnsafeRow): Int =
    if (key.anyNull()) -1
    else {
      val g = lookup.get(key)
      if (g == null) -1 else g.intValue()
    }
}

/**
 * The segment of a streamed row's equality key, packed ([[KeyGroups.segment]]), once per streamed
 * row: a SAM returning a primitive, where a Function1 to Long would box it on every call.
 */
private[rangejoin] trait SegmentOf {
  def apply(row: InternalRow): Long
}

private[rangejoin] object KeyGroups {
  /**
   * A segment [from, until) packed in one long, `from` in the high half: a lookup hands the
   * finder both ends at once, and a dense key's segment is one array read, not a group number
   * and then its starts (two dependent reads per streamed row).
   */
  def segment(from: Int, until: Int): Long = (from.toLong << 32) | (until & 0xFFFFFFFFL)

  /** Group `group`'s segment of `starts`, packed; empty for group -1 (no group). */
  def segment(starts: Array[Int], group: Int): Long =
    if (group < 0) Empty else segment(starts(group), starts(group + 1))

  def from(segment: Long): Int = (segment >>> 32).toInt

  def until(segment: Long): Int = segment.toInt

  /** The empty segment: no group has the key, or the key has a NULL. */
  val Empty: Long = 0L

  /** Whether a one-column key of this type compares equal exactly when its longs do. */
  def isLongKey(dataType: DataType): Boolean = dataType match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  /**
   * Looks a streamed row's equality key (`keys`, bound to the row) up in `groups`: one column of
   * a long-keyed group is read in place as a long; any other key is projected to an UnsafeRow.
   */
  def lookup(groups: KeyGroups, keys: Seq[Expression]): SegmentOf = (groups, keys) match {
    case (g: LongKeyGroups, Seq(BoundReference(ordinal, _, _))) =>
      val encode = g.encoder
      row => if (row.isNullAt(ordinal)) Empty else g.segment(encode(row, ordinal))
    case (g: LongKeyGroups, _) =>
      val encode = g.encoder
      val project = UnsafeProjection.create(keys)
      row => {
        val key = project(row)
        if (key.isNullAt(0)) Empty else g.segment(encode(key, 0))
      }
    case (g: RowKeyGroups, _) =>
      val project = UnsafeProjection.create(keys)
      row => g.segment(project(row))
  }

  /** Numbers the buffered rows' equality keys, `keys` bound to the rows, on the driver. */
  def numbering(keys: Seq[Expression]): Numbering = keys match {
    case Seq(k) if isLongKey(k.dataType) => new LongNumbering(k)
    case _ => new RowNumbering(keys)
  }

  /**
   * Gives each distinct key a group number as rows are read (the first key read is group 0),
   * may then place the groups in another order ([[Numbering.placement]]: a long key's in
   * ascending key order), and makes the [[KeyGroups]] once the rows are placed.
   */
  sealed abstract class Numbering {
    /** The group of `row`'s key, new if the key is; -1 when the key has a NULL. */
    def groupOf(row: InternalRow): Int

    def numGroups: Int

    /**
     * Where each group goes in the buffer's order of groups, by group number; null to keep the
     * numbering's own order. Called once every row is numbered.
     */
    def placement(): Array[Int] = null

    /** The groups, in the order `place` (the [[placement]], or null) put them in. */
    def groups(starts: Array[Int], place: Array[Int]): KeyGroups
  }

  private final class LongNumbering(key: Expression) extends Numbering {
    private[this] val encode = KeyTypes.longEncoder(key.dataType).get
    // A column is read in place; any other key is projected first.
    private[this] val (keyOf, ordinal) = key match {
      case BoundReference(o, _, _) => ((r: InternalRow) => r, o)
      case other => (UnsafeProjection.create(Seq(other)): InternalRow => InternalRow, 0)
    }
    private[this] val known = new HashedLongToGroup(1024)
    private[this] var keys = new Array[Long](1024)
    private[this] var count = 0

    override def groupOf(row: InternalRow): Int = {
      val k = keyOf(row)
      if (k.isNullAt(ordinal)) -1
      else {
        val key = encode(k, ordinal)
        val g = known.getOrAdd(key, count)
        if (g == count) {
          if (count == keys.length) keys = java.util.Arrays.copyOf(keys, 2 * count)
          keys(count) = key
          count += 1
        }
        g
      }
    }

    override def numGroups: Int = count

    // Groups in ascending key order: streamed rows met in key order then read the buffer from
    // front to back (ShuffledPiecewiseMergeJoinExec clusters them so).
    override def placement(): Array[Int] = {
      val order = Array.range(0, count)
      IndexSort.sortLongs(order, keys)
      val place = new Array[Int](count)
      var g = 0
      while (g < count) {
        place(order(g)) = g
        g += 1
      }
      place
    }

    override def groups(starts: Array[Int], place: Array[Int]): KeyGroups = {
      val placed = new Array[Long](count)
      var g = 0
      while (g < count) {
        placed(if (place == null) g else place(g)) = keys(g)
        g += 1
      }
      new LongKeyGroups(placed, starts, key.dataType)
    }
  }

  private final class RowNumbering(keys: Seq[Expression]) extends Numbering {
    private[this] val keyOf = UnsafeProjection.create(keys)
    private[this] val known = new java.util.HashMap[UnsafeRow, Integer]
    private[this] val keyRows = scala.collection.mutable.ArrayBuffer.empty[InternalRow]

    override def groupOf(row: InternalRow): Int = {
      val key = keyOf(row)
      if (key.anyNull()) -1
      else {
        val g = known.get(key)
        if (g != null) g.intValue()
        else {
          val copy = key.copy()
          known.put(copy, keyRows.size)
          keyRows += copy
          keyRows.size - 1
        }
      }
    }

    override def numGroups: Int = keyRows.size

    override def groups(starts: Array[Int], place: Array[Int]): KeyGroups = {
      require(place == null, "row keys keep the order they were read in")
      new RowKeyGroups(new BroadcastRows(keyRows.toArray), starts)
    }
  }
}
