package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.util.ArrayData

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
 * O(log n) comparisons.
 *
 * A subclass holds the keys in one stored form and compares key i with a probe: the streamed
 * key, loaded once per streamed row. Instances are per task (the probe is mutable state).
 */
abstract class SortedKeys {

  def size: Int

  /** Loads the probe from field 0 of `keyRow`; false when it is NULL, which matches nothing. */
  def load(keyRow: InternalRow): Boolean

  /** The sign of comparing key i with the loaded probe. */
  protected def compareToProbe(i: Int): Int

  /**
   * The first index whose key is above the probe, or at or above it when `orEqual`; `size` when
   * there is none.
   */
  final def boundary(orEqual: Boolean): Int = {
    var lo = 0
    var hi = size
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      val c = compareToProbe(mid)
      if (c > 0 || (orEqual && c == 0)) hi = mid else lo = mid + 1
    }
    lo
  }
}

/** Keys stored as order-preserving longs (see [[KeyCodec]]): one primitive compare each. */
final class LongKeys(keys: ArrayData, encode: (SpecializedGetters, Int) => Long)
  extends SortedKeys {

  override val size: Int = keys.numElements()
  private[this] var probe = 0L

  override def load(keyRow: InternalRow): Boolean = {
    if (keyRow.isNullAt(0)) return false
    probe = encode(keyRow, 0)
    true
  }

  override protected def compareToProbe(i: Int): Int = java.lang.Long.compare(keys.getLong(i), probe)
}

/** Keys stored as their values, compared with Spark's own ordering for their type. */
final class OrderedKeys(
    keys: ArrayData,
    read: (SpecializedGetters, Int) => Any,
    ordering: Ordering[Any]) extends SortedKeys {

  override val size: Int = keys.numElements()
  private[this] var probe: Any = _

  override def load(keyRow: InternalRow): Boolean = {
    if (keyRow.isNullAt(0)) return false
    // Points into keyRow, which stays unchanged until the next streamed row is loaded.
    probe = read(keyRow, 0)
    true
  }

  override protected def compareToProbe(i: Int): Int = ordering.compare(read(keys, i), probe)
}
