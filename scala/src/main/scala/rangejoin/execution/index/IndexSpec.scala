package rangejoin.execution.index

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * Which index a join's buffered side gets, from its bounds as the join runs them
 * ([[RangeBounds.oriented]]): what the buffer is sorted by, what else it keeps, and the finder
 * each task builds over it.
 * {{{
 *   one bound                      SortedRun      sorted by its key; a prefix or a suffix
 *   two bounds on one key          BandRun        sorted by that key; the run between two searches
 *   two bounds on two keys         IntervalIndex  sorted by the key bounded from above, with the
 *                                                 other in an interval tree
 *   equality keys and any above    ... per key    one of the above within each key's segment
 *                                                 ([[KeyGroups]]), found by a hash lookup
 * }}}
 */
private[rangejoin] sealed abstract class IndexSpec(val name: String) extends Serializable {
  /** The bounds, the one that sorts the buffer first. */
  def bounds: Seq[Bound]
  /**
   * The bound whose buffered key the buffer is sorted by: its extreme rows are the first and last
   * keyed ones, which the dynamic filter and the existence fast path read.
   */
  def sortBound: Bound = bounds.head
  def sortKey: Expression = sortBound.bufferedKey
  /** The buffered key kept beside each row for the interval tree. */
  def secondKey: Option[Expression] = None
  /** The buffered equality keys the buffer is grouped by; empty when it is not. */
  def groupKeys: Seq[Expression] = Nil
  /** The index each search runs: this one, or the one within a key's segment. */
  def base: IndexSpec = this
  /**
   * Whether every search finds one run of positions ([[CandidateFinder.isRun]]), which generated
   * code can walk as a counted loop; an unsorted buffer's every-row finder is one run too.
   */
  def findsRuns: Boolean = base match {
    case _: IndexSpec.SortedRun | _: IndexSpec.BandRun => true
    case _ => false
  }
}

private[rangejoin] object IndexSpec {
  final case class SortedRun(bound: Bound) extends IndexSpec("SortedRun") {
    override def bounds: Seq[Bound] = Seq(bound)
  }

  /** `lower` bounds the buffered key from below (its op is Lt or Le), `upper` from above. */
  final case class BandRun(lower: Bound, upper: Bound) extends IndexSpec("BandRun") {
    override def bounds: Seq[Bound] = Seq(lower, upper)
  }

  /** Sorted by `upper`'s buffered key; `lower`'s buffered key in the tree. */
  final case class IntervalIndex(lower: Bound, upper: Bound) extends IndexSpec("IntervalIndex") {
    override def bounds: Seq[Bound] = Seq(upper, lower)
    override def secondKey: Option[Expression] = Some(lower.bufferedKey)
  }

  /**
   * Equality keys: `within` searches the segment of the buffered rows whose `bufferedKeys` equal
   * the streamed row's `streamedKeys`.
   */
  final case class PerKey(streamedKeys: Seq[Expression], bufferedKeys: Seq[Expression], within: IndexSpec)
    extends IndexSpec(s"${within.name} per key") {
    override def bounds: Seq[Bound] = within.bounds
    override def secondKey: Option[Expression] = within.secondKey
    override def groupKeys: Seq[Expression] = bufferedKeys
    override def base: IndexSpec = within
  }

  /** The index for `range` with the left side streamed or not. */
  def of(range: RangeBounds, streamedIsLeft: Boolean): IndexSpec = {
    val bounded = of(range.oriented(streamedIsLeft))
    if (!range.isKeyed) bounded
    else {
      val (streamedKeys, bufferedKeys) = range.orientedKeys(streamedIsLeft)
      PerKey(streamedKeys, bufferedKeys, bounded)
    }
  }

  def of(bounds: Seq[Bound]): IndexSpec = bounds match {
    case Seq(bound) => SortedRun(bound)
    case Seq(a, b) =>
      val (lower, upper) = if (a.boundsBufferedFromBelow) (a, b) else (b, a)
      if (lower.bufferedKey.semanticEquals(upper.bufferedKey)) BandRun(lower, upper)
      else IntervalIndex(lower, upper)
    case other => throw new IllegalArgumentException(s"no index for the bounds $other")
  }
}
