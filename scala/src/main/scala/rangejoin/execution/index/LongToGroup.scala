package rangejoin.execution.index

/**
 * A one-column equality key's group number, looked up by the key read as a long (-1: no group):
 * what Spark's LongHashedRelation is to BroadcastHashJoin, and, like it, an array indexed by the
 * key when the keys are dense enough, a hash table otherwise.
 * {{{
 *   group keys 7 8 10 12 (span 6 <= 4 x 4 keys)   dense:  key - 7 -> [0 1 -1 2 -1 3]
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

  /** The densest key span (largest minus smallest, plus one) per key that still gets an array. */
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
    // A span past Long.MaxValue wraps to zero or below: hashed.
    val span = max - min + 1
    if (span > 0 && span <= math.max(64L, DenseSpanPerKey.toLong * keys.length)) {
      val groups = Array.fill(span.toInt)(-1)
      var g = 0
      while (g < keys.length) {
        groups((keys(g) - min).toInt) = g
        g += 1
      }
      new DenseLongToGroup(min, groups)
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

private final class DenseLongToGroup(min: Long, groups: Array[Int]) extends LongToGroup {
  // key - min wraps below min to a large unsigned value: one unsigned test bounds both sides.
  override def get(key: Long): Int = {
    val i = key - min
    if (java.lang.Long.compareUnsigned(i, groups.length) < 0) groups(i.toInt) else -1
  }

  override def segments(starts: Array[Int]): LongToSegment = {
    val packed = new Array[Long](groups.length)
    var i = 0
    while (i < groups.length) {
      packed(i) = KeyGroups.segment(starts, groups(i))
      i += 1
    }
    new DenseLongToSegment(min, packed)
  }
}

/** The dense array again, holding each key's segment itself: one read per lookup. */
private final class DenseLongToSegment(min: Long, segments: Array[Long]) extends LongToSegment {
  override def get(key: Long): Long = {
    val i = key - min
    if (java.lang.Long.compareUnsigned(i, segments.length) < 0) segments(i.toInt) else KeyGroups.Empty
  }
}

/** The hash table's group, then its starts. */
private final class HashedLongToSegment(groups: HashedLongToGroup, starts: Array[Int]) extends LongToSegment {
  override def get(key: Long): Long = KeyGroups.segment(starts, groups.get(key))
}

/**
 * Open addressing with linear probing; key and group sit side by side, so a lookup touches one
 * cache line. Grows as keys are added, which the driver does while it numbers the groups.
 */
private[rangejoin] final class HashedLongToGroup(expected: Int) extends LongToGroup {
  private[this] var mask = capacityFor(expected) - 1
  // slots(2 s) the key, slots(2 s + 1) its group + 1 (0: empty).
  private[this] var slots = new Array[Long](2 * (mask + 1))
  private[this] var size = 0

  private def capacityFor(n: Int): Int = Integer.highestOneBit(math.max(4, n) * 2) * 2

  private def slot(key: Long): Int = {
    val h = key * 0x9E3779B97F4A7C15L
    (h ^ (h >>> 32)).toInt & mask
  }

  override def get(key: Long): Int = {
    var s = slot(key)
    while (slots(2 * s + 1) != 0) {
      if (slots(2 * s) == key) return slots(2 * s + 1).toInt - 1
      s = (s + 1) & mask
    }
    -1
  }

  override def segments(starts: Array[Int]): LongToSegment = new HashedLongToSegment(this, starts)

  /** The group of `key`, which becomes `group` if the key is new. */
  def getOrAdd(key: Long, group: Int): Int = {
    var s = slot(key)
    while (slots(2 * s + 1) != 0) {
      if (slots(2 * s) == key) return slots(2 * s + 1).toInt - 1
      s = (s + 1) & mask
    }
    slots(2 * s) = key
    slots(2 * s + 1) = group + 1L
    size += 1
    if (2 * size > mask + 1) grow()
    group
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
