package rangejoin.execution.index

import rangejoin.condition.AsOfDirection

/**
 * An as-of join's search in one window of sorted times (stored as order-preserving longs, a key's
 * segment of the buffer or the whole of it): the candidates of a left time `l`, and the one an
 * as-of join picks, in O(log n).
 * {{{
 *   times        1  3  3  5  8  8        l = 5, no tolerance
 *   backward >=  [1  3  3  5]            best: 5 (the last of the candidates)
 *   backward >   [1  3  3]               best: the second 3 (the last of equal times)
 *   forward  >=           [5  8  8]      best: 5 (the first)
 *   nearest                              the last time <= l or the first >= l, whichever is
 *                                        nearer; the earlier one when both are as near
 *   with a tolerance's bounds, the window shrinks to [lower, upper] first
 * }}}
 * Candidates are one run [lo, hi) of the window (for a nearest match that excludes exact ones,
 * the run minus the times equal to l). Among equal times the backward search takes the last in
 * buffer order and the forward search the first; stock Spark's choice among equal times depends
 * on the order rows reach it (docs/semantics.md, as-of joins).
 *
 * Instances are per task: [[locate]] sets `lo`, `hi` and `best` for one left row. The binary
 * searches are [[LongSearch]]'s, which picks one of two by the order of the recent left times.
 */
private[rangejoin] final class AsOfSearch(keys: Array[Long], direction: AsOfDirection, inclusive: Boolean) {

  private[this] val search = new LongSearch(keys)

  /** The candidates of the last search: positions [lo, hi). */
  var lo = 0
  var hi = 0
  /** The candidate picked, or -1 when there is none. */
  var best = -1

  def key(i: Int): Long = keys(i)

  /**
   * Searches window [from, until) for left time `l` and the tolerance's bounds on the right time
   * (`lower`/`upper` when `hasLower`/`hasUpper`; inclusive when `boundsInclusive`).
   */
  def locate(from: Int, until: Int, l: Long, hasLower: Boolean, lower: Long, hasUpper: Boolean, upper: Long,
      boundsInclusive: Boolean): Unit = {
    search.observe(l)
    lo = if (hasLower) firstAbove(from, until, lower, orEqual = boundsInclusive) else from
    hi = if (hasUpper) firstAbove(lo, until, upper, orEqual = !boundsInclusive) else until
    direction match {
      case AsOfDirection.Backward =>
        hi = math.max(lo, firstAbove(lo, hi, l, orEqual = !inclusive))
        best = if (hi > lo) hi - 1 else -1
      case AsOfDirection.Forward =>
        lo = math.min(hi, firstAbove(lo, hi, l, orEqual = inclusive))
        best = if (hi > lo) lo else -1
      case AsOfDirection.Nearest =>
        val below = firstAbove(lo, hi, l, orEqual = !inclusive) - 1 // last time <= l (< l)
        val above = firstAbove(lo, hi, l, orEqual = inclusive) // first time >= l (> l)
        best =
          if (below < lo) (if (above < hi) above else -1)
          else if (above >= hi) below
          else if (java.lang.Long.compareUnsigned(l - key(below), key(above) - l) <= 0) below
          else above
    }
  }

  /** Whether the last search's candidates include position i (a nearest match may skip exact ones). */
  def isCandidate(i: Int, l: Long): Boolean = i >= lo && i < hi && (inclusive || key(i) != l)

  /** The first position of [from, until) whose time is above `v` (at or above, `orEqual`); `until` if none. */
  private def firstAbove(from: Int, until: Int, v: Long, orEqual: Boolean): Int = search.firstAbove(from, until, v, orEqual)
}

/**
 * Whether the distance between two times of a type, as stock Spark computes it (`l - r`), is the
 * exact difference: then the nearest time in order is the nearest in distance, and the search's
 * pick is stock Spark's. Otherwise (an int distance past 2^31, dates whose difference in
 * microseconds passes a long) stock Spark's distance wraps or raises, and the join evaluates it.
 */
private[rangejoin] sealed abstract class DistanceRange extends Serializable {
  /** Whether `far - near` (far >= near, as stored longs) is exact in the distance's type. */
  def exact(far: Long, near: Long): Boolean
}

private[rangejoin] object DistanceRange {
  /** An int distance (int times): the stored longs are the ints. */
  case object IntRange extends DistanceRange {
    override def exact(far: Long, near: Long): Boolean = far - near <= Int.MaxValue
  }

  /** A long or microsecond distance (bigint, timestamps): the difference must not overflow. */
  case object LongRange extends DistanceRange {
    override def exact(far: Long, near: Long): Boolean = {
      val d = far - near
      ((far ^ near) & (far ^ d)) >= 0
    }
  }

  /** Days multiplied into microseconds (dates): Spark's `multiplyExact`. */
  case object DaysAsMicros extends DistanceRange {
    private val MaxDays = Long.MaxValue / 86400000000L
    override def exact(far: Long, near: Long): Boolean = far - near <= MaxDays
  }

  /** Decimals of up to 18 digits: their difference always fits the wider decimal Spark computes. */
  case object Exact extends DistanceRange {
    override def exact(far: Long, near: Long): Boolean = true
  }
}
