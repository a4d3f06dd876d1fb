package rangejoin.execution.index

/**
 * A one-column equality key's group number, looked up by the key read as a long (-1: no group):
 * what Spark's LongHashedRelation is to BroadcastHashJoin, and, like it, an array indexed by the
 * key when the keys are dense enough, a hash table otherwise.
 * {{{
 *   group keys 7 8 10 12 (span 6 <= 4 x 4 keys)   dense:  key - 7 -> [0 1 -1 2 -1 3]
 *   group keys 64 128 256 (multiples of 64)       dense:  (key - 64) >>> 6 -> [0 1 -1 2]
 *   group keys 7 1000 10^9                        hashed: open addressing, linear probing
 * }}}
 */
private[rangejoin] sealed abstract class LongToGroup {
  def get(key: Long): Int

  /** Each key's segment of `starts` (group g holds [starts(g), starts(g + 1))), packed as [[KeyGroups.segment]]. */
  def segments(starts: Array[Int]): LongToSegment
}

/** A one-column key's segment, packed ([[KeyGroups.segment]]; empty when no group has the key). */
private[rangejoin] sealed abstract class LongToSegment {
  def get(key: Long): Long
}

private[rangejoin] object LongToGroup {

  /** The most array positions per key (the span of the keys over their common stride) that still get an array. */
  val DenseSpanPerKey = 4

  /** Groups numbered by their position in `keys`, which holds each key once. */
  def apply(keys: Array[Long]): LongToGroup = {
    if (keys.isEmpty) return new HashedLongToGroup(0)
    var min = keys(0)
    var max = keys(0)
    keys.foreach { k =>
      min = math.min(min, k)
      max = math.max(max, k)
    }
    // Keys spaced by a power of two (a binned join's keys are bin * 64 + level: on one level,
    // multiples of 64) are dense once divided by it: the array is indexed by (key - min) >>> shift.
    var offsets = 0L
    keys.foreach(k => offsets |= k - min)
    val shift = if (offsets == 0) 0 else java.lang.Long.numberOfTrailingZeros(offsets)
    // Unsigned: a span past Long.MaxValue is a large unsigned number, and is hashed.
    val last = (max - min) >>> shift
    if (java.lang.Long.compareUnsigned(last, math.max(64L, DenseSpanPerKey.toLong * keys.length)) < 0) {
      val groups = Array.fill(last.toInt + 1)(-1)
      var g = 0
      while (g < keys.length) {
        groups(((keys(g) - min) >>> shift).toInt) = g
        g += 1
      }
      new DenseLongToGroup(min, shift, groups)
    } else {
      val map = new HashedLongToGroup(keys.length)
      var g = 0
      while (g < keys.length) {
        map.getOrAdd(keys(g), g)
        g += 1
      }
      map
    }
  }
}

/**
 * The array positions of keys min + j * 2^shift: (key - min) >>> shift. A key off that stride
 * has low bits set; one below min wraps to an unsigned offset past every key's. So one mask test
 * and one unsigned bound find a key's position or rule it out.
 */
private object Strided {
  @inline def position(key: Long, min: Long, shift: Int, length: Int): Int = {
    val offset = key - min
    if ((offset & ((1L << shift) - 1)) != 0) -1
    else {
      val i = offset >>> shift
      if (java.lang.Long.compareUnsigned(i, length) < 0) i.toInt else -1
    }
  }
}

private final class DenseLongToGroup(min: Long, shift: Int, groups: Array[Int]) extends LongToGroup {
  override def get(key: Long): Int = {
    val i = Strided.position(key, min, shift, groups.length)
    if (i < 0) -1 else groups(i)
  }

  override def segments(starts: Array[Int]): LongToSegment = {
    val packed = new Array[Long](groups.length)
    var i = 0
    while (i < groups.length) {
      packed(i) = KeyGroups.segment(starts, groups(i))
      i += 1
    }
    new DenseLongToSegment(min, shift, packed)
  }
}

/** The dense array again, holding each key's segment itself: one read per lookup. */
private final class DenseLongToSegment(min: Long, shift: Int, segments: Array[Long]) extends LongToSegment {
  override def get(key: Long): Long = {
    val i = Strided.position(key, min, shift, segments.length)
    if (i < 0) KeyGroups.Empty else segments(i)
  }
}

/**
 * The hash table again, holding each key's segment beside it: one cache line per lookup, where
 * the group and then its starts were two dependent reads more.
 */
private final class HashedLongToSegment(groups: HashedLongToGroup, starts: Array[Int]) extends LongToSegment {
  // An empty segment (0, as KeyGroups.Empty) is what a missing key gets: it need not be stored.
  private[this] val table = groups.table.mapValues(group => KeyGroups.segment(starts, (group - 1).toInt))

  override def get(key: Long): Long = table.get(key)
}

/** The hash table ([[LongLongTable]]), which grows as the driver numbers the groups. */
private[rangejoin] final class HashedLongToGroup(expected: Int) extends LongToGroup {
  // Each key's group + 1: the table's 0 is "no key".
  private[index] val table = new LongLongTable(expected)

  override def get(key: Long): Int = (table.get(key) - 1).toInt

  override def segments(starts: Array[Int]): LongToSegment = new HashedLongToSegment(this, starts)

  /** The group of `key`, which becomes `group` if the key is new. */
  def getOrAdd(key: Long, group: Int): Int = (table.getOrAdd(key, group + 1L) - 1).toInt
}

/**
 * Long keys to nonzero long values (0: no value), open addressing with linear probing; a key and
 * its value sit side by side, so a lookup touches one cache line. Grows as keys are added.
 */
private[index] final class LongLongTable(expected: Int) {
  private[this] var mask = capacityFor(expected) - 1
  // slots(2 s) the key, slots(2 s + 1) its value (0: an empty slot).
  private[this] var slots = new Array[Long](2 * (mask + 1))
  private[this] var size = 0

  private def capacityFor(n: Int): Int = Integer.highestOneBit(math.max(4, n) * 2) * 2

  private def slot(key: Long): Int = {
    val h = key * 0x9E3779B97F4A7C15L
    (h ^ (h >>> 32)).toInt & mask
  }

  /** The value of `key`, or 0. */
  def get(key: Long): Long = {
    var s = slot(key)
    var v = slots(2 * s + 1)
    while (v != 0) {
      if (slots(2 * s) == key) return v
      s = (s + 1) & mask
      v = slots(2 * s + 1)
    }
    0L
  }

  /** The value of `key`, which becomes `value` (nonzero) if the key is new. */
  def getOrAdd(key: Long, value: Long): Long = {
    var s = slot(key)
    while (slots(2 * s + 1) != 0) {
      if (slots(2 * s) == key) return slots(2 * s + 1)
      s = (s + 1) & mask
    }
    slots(2 * s) = key
    slots(2 * s + 1) = value
    size += 1
    if (2 * size > mask + 1) grow()
    value
  }

  /** A table of the same keys whose values are `f` of these; a key whose new value is 0 is left out. */
  def mapValues(f: Long => Long): LongLongTable = {
    val mapped = new LongLongTable(size)
    var s = 0
    while (s <= mask) {
      if (slots(2 * s + 1) != 0) {
        val v = f(slots(2 * s + 1))
        if (v != 0) mapped.getOrAdd(slots(2 * s), v)
      }
      s += 1
    }
    mapped
  }

  private def grow(): Unit = {
    val old = slots
    mask = 2 * (mask + 1) - 1
    slots = new Array[Long](2 * (mask + 1))
    var s = 0
    while (s < old.length / 2) {
      if (old(2 * s + 1) != 0) {
        var t = slot(old(2 * s))
        while (slots(2 * t + 1) != 0) t = (t + 1) & mask
        slots(2 * t) = old(2 * s)
        slots(2 * t + 1) = old(2 * s + 1)
      }
      s += 1
    }
  }
}
