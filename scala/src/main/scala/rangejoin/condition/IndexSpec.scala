package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * Which index a join's buffered side gets, from its predicates as the join runs them
 * ([[RangeCondition.oriented]]): what the buffer is sorted by, what else it keeps, and the finder
 * each task builds over it.
 * {{{
 *   one predicate                  SortedRun      sorted by its key; a prefix or a suffix
 *   two (a band) on one key        BandRun        sorted by that key; the run between two searches
 *   two (a band) on two keys       IntervalIndex  sorted by the key bounded from above, with the
 *                                                 other in an interval tree
 *   equality keys and any above    ... per key    one of the above within each key's segment
 *                                                 ([[rangejoin.execution.index.KeyGroups]]), found by a hash lookup
 * }}}
 */
private[rangejoin] sealed abstract class IndexSpec(val name: String) extends Serializable {
  /** The predicates, the one that sorts the buffer first. */
  def predicates: Seq[OrientedPredicate]
  /**
   * The predicate whose buffered key the buffer is sorted by: its extreme rows are the first and last
   * keyed ones, which the dynamic filter and the existence fast path read.
   */
  def sortPredicate: OrientedPredicate = predicates.head
  def sortKey: Expression = sortPredicate.bufferedKey
  /** The buffered key kept beside each row for the interval tree. */
  def secondKey: Option[Expression] = None
  /** The buffered equality keys the buffer is grouped by; empty when it is not. */
  def groupKeys: Seq[Expression] = Nil
  /** The index each search runs: this one, or the one within a key's segment. */
  def base: IndexSpec = this
  /**
   * Whether every search of this index finds one run of positions
   * ([[rangejoin.execution.index.CandidateFinder.isRun]]); an unsorted buffer's every-row finder is
   * one run too. A join's finder may still walk a run in another order: JoinSpec.findsRuns.
   */
  def findsRuns: Boolean = base match {
    case _: IndexSpec.SortedRun | _: IndexSpec.BandRun => true
    case _ => false
  }
}

private[rangejoin] object IndexSpec {
  final case class SortedRun(predicate: OrientedPredicate) extends IndexSpec("SortedRun") {
    override def predicates: Seq[OrientedPredicate] = Seq(predicate)
  }

  /** `lower` bounds the buffered key from below (its op is Lt or Le), `upper` from above. */
  final case class BandRun(lower: OrientedPredicate, upper: OrientedPredicate) extends IndexSpec("BandRun") {
    override def predicates: Seq[OrientedPredicate] = Seq(lower, upper)
  }

  /** Sorted by `upper`'s buffered key; `lower`'s buffered key in the tree. */
  final case class IntervalIndex(lower: OrientedPredicate, upper: OrientedPredicate) extends IndexSpec("IntervalIndex") {
    override def predicates: Seq[OrientedPredicate] = Seq(upper, lower)
    override def secondKey: Option[Expression] = Some(lower.bufferedKey)
  }

  /**
   * Equality keys: `within` searches the segment of the buffered rows whose `bufferedKeys` equal
   * the streamed row's `streamedKeys`.
   */
  final case class PerKey(streamedKeys: Seq[Expression], bufferedKeys: Seq[Expression], within: IndexSpec)
    extends IndexSpec(s"${within.name} per key") {
    override def predicates: Seq[OrientedPredicate] = within.predicates
    override def secondKey: Option[Expression] = within.secondKey
    override def groupKeys: Seq[Expression] = bufferedKeys
    override def base: IndexSpec = within
  }

  /** The index for `range` with the left side streamed or not. */
  def of(range: RangeCondition, streamedIsLeft: Boolean): IndexSpec = {
    val bounded = of(range.oriented(streamedIsLeft))
    if (!range.isKeyed) bounded
    else {
      val (streamedKeys, bufferedKeys) = range.orientedKeys(streamedIsLeft)
      PerKey(streamedKeys, bufferedKeys, bounded)
    }
  }

  def of(predicates: Seq[OrientedPredicate]): IndexSpec = predicates match {
    case Seq(bound) => SortedRun(bound)
    case Seq(a, b) =>
      val (lower, upper) = if (a.op.isLess) (a, b) else (b, a)
      if (lower.bufferedKey.semanticEquals(upper.bufferedKey)) BandRun(lower, upper)
      else IntervalIndex(lower, upper)
    case other => throw new IllegalArgumentException(s"no index for the predicates $other")
  }
}
