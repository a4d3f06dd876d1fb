package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.util.ArrayData

import rangejoin.condition.LongEncoder

/**
 * The buffered side's non-NULL join keys in ascending order, and the one search every range join
 * reduces to.
 *
 * For a streamed key s, the buffered keys b with `s op b` form a run at one end of the order:
 * {{{
 *   keys      1  3  3  5  8        (s = 3)
 *   s <  b             [5  8]      suffix, from the first key above s
 *   s <= b       [3  3  5  8]      suffix, from the first key at or above s
 *   s >  b    [1]                  prefix, up to the first key at or above s
 *   s >= b    [1  3  3]            prefix, up to the first key above s
 * }}}
 * so a binary search for that one boundary bounds the run, past any run of duplicates, in
 * O(log n) comparisons. A probe beyond either end of the keys (in a selective join, most of them)
 * takes one or two.
 *
 * A subclass holds the keys in one stored form and compares key i with a probe: the streamed
 * key, loaded once per streamed row. Instances are per task (the probe is mutable state).
 *
 * Under equality keys the keys are sorted within each key's segment only ([[KeyGroups]]): a
 * search then runs in the window [from, until) of the streamed row's segment, set by
 * `restrict` before each search.
 */
private[rangejoin] abstract class SortedKeys {

  def size: Int

  private[this] var lo = 0
  private[this] var hi = -1 // -1: the whole array, whose size a subclass knows only once built

  /** The window's first position. */
  final def from: Int = lo

  /** The position after the window's last. */
  final def until: Int = if (hi < 0) size else hi

  /** Limits the searches that follow to positions [from, until). */
  final def restrict(from: Int, until: Int): Unit = {
    lo = from
    hi = until
  }

  /** Loads the probe from field `ordinal` of `row`; false when it is NULL, which matches nothing. */
  def load(row: InternalRow, ordinal: Int): Boolean

  /** The sign of comparing key i with the loaded probe. */
  protected def compareToProbe(i: Int): Int

  /** Whether key i is above the probe, or at or above it when `orEqual`: [[boundary]]'s test. */
  final def isAbove(i: Int, orEqual: Boolean): Boolean = {
    val c = compareToProbe(i)
    c > 0 || (orEqual && c == 0)
  }

  /**
   * The first index of the window whose key is above the probe, or at or above it when
   * `orEqual`; `until` when there is none.
   */
  final def boundary(orEqual: Boolean): Int = {
    val first = from
    val end = until
    if (end <= first || !isAbove(end - 1, orEqual)) return end
    if (isAbove(first, orEqual)) return first
    firstAbove(first + 1, end - 1, orEqual)
  }

  /** [[firstAbove]], for a finder that knows the boundary lies in [lo, hi]. */
  final def firstAboveIn(lo: Int, hi: Int, orEqual: Boolean): Int = firstAbove(lo, hi, orEqual)

  /** The first index of [lo, hi) whose key is above the probe (at or above, `orEqual`); `hi` if none. */
  protected def firstAbove(lo: Int, hi: Int, orEqual: Boolean): Int = {
    var a = lo
    var b = hi
    while (a < b) {
      val mid = (a + b) >>> 1
      val c = compareToProbe(mid)
      if (c > 0 || (orEqual && c == 0)) b = mid else a = mid + 1
    }
    a
  }
}

/**
 * Keys stored as order-preserving longs (see [[KeyCodec]]), read from a plain array: one
 * primitive compare each, and [[LongSearch]]'s binary search, which picks its form by the order
 * of the streamed keys.
 */
private[rangejoin] final class LongKeys(keys: Array[Long], encode: LongEncoder)
  extends SortedKeys {

  override val size: Int = keys.length
  private[this] var probe = 0L
  private[this] val search = new LongSearch(keys)

  override def load(row: InternalRow, ordinal: Int): Boolean = {
    if (row.isNullAt(ordinal)) return false
    probe = encode(row, ordinal)
    search.observe(probe)
    true
  }

  override protected def compareToProbe(i: Int): Int = java.lang.Long.compare(keys(i), probe)

  override protected def firstAbove(lo: Int, hi: Int, orEqual: Boolean): Int = search.firstAbove(lo, hi, probe, orEqual)
}

/** Keys stored as their values, compared with Spark's own ordering for their type. */
private[rangejoin] final class OrderedKeys(
    keys: ArrayData,
    read: (SpecializedGetters, Int) => Any,
    ordering: Ordering[Any]) extends SortedKeys {

  override val size: Int = keys.numElements()
  private[this] var probe: Any = _

  override def load(row: InternalRow, ordinal: Int): Boolean = {
    if (row.isNullAt(ordinal)) return false
    // Points into the row, which stays unchanged until the next streamed row is loaded.
    probe = read(row, ordinal)
    true
  }

  override protected def compareToProbe(i: Int): Int = ordering.compare(read(keys, i), probe)
}
