package rangejoin.bins

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.BitOrAgg
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, InnerLike, LeftAnti, LeftOuter, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Generate, Join, JoinHint, LogicalPlan, Project, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.JOIN
import org.apache.spark.sql.types._

import rangejoin.RangeJoinConf
import rangejoin.condition.{CannotFail, Evaluable, KeyTypes, RangePredicate}
import rangejoin.planning.{BufferedSide, ConditionSplit, RangeJoinHints}

/**
 * Rewrites an inner band or interval join too large to broadcast into an equi-join on bins, which
 * Spark runs as its own shuffled join (sort-merge or hash), with spill and adaptive skew handling:
 * {{{
 *   Join Inner, p.x >= i.lo AND p.x <= i.hi          Project [p.*, i.*]
 *   :- p (2M rows)                           ==>     +- Join Inner, bin_p = bin_i AND p.x >= i.lo AND p.x <= i.hi
 *   +- i (200K rows)                                 :- Generate explode(RangeJoinPointBins(p.x, grid))
 *                                                    :  +- p                    one bin per level
 *                                                    +- Generate explode(RangeJoinIntervalBins(i.lo, i.hi, grid))
 *                                                       +- i                    every bin on its level
 *   grid = scalar subquery over i: (base bin size, levels holding intervals)
 * }}}
 * The original condition stays on the join, so bins only choose candidates; a point and an
 * interval containing it share exactly one (level, bin) ([[BinGrid]]), so each pair is emitted
 * once. A (level, bin) is one long key ([[BinKeys.key]]), so Spark sorts each side by one long.
 * Equality conjuncts of the condition stay equi-join keys alongside the bins.
 *
 * Outer joins (left, right, full) are the inner join's pairs plus, for each preserved side, its
 * rows with no pair, padded with NULLs, found by an anti join against the pairs
 * (`preservedSides`): each preserved row comes out once, matched or not, whichever side is
 * expanded into bins.
 * {{{
 *   Union
 *   :- (the inner pairs, as above)
 *   +- Project [p.*, NULL AS i.*]
 *      +- Join LeftAnti, p.x <=> x' AND ...       the preserved side's columns in the condition
 *         :- p
 *         +- Distinct [p.x AS x', ...] of the inner pairs
 * }}}
 *
 * Which joins: inner or outer, not rewritten before (its bins are in the condition), condition
 * deterministic and evaluable, both sides deterministic (each is read more than once), a band found by
 * [[rangejoin.planning.ConditionSplit]] whose four keys cannot fail
 * (they are evaluated on every row; Spark evaluates them only on the pairs it compares) and are
 * all of one type that bins as a long ([[BinKeys]]), and either a `RANGE_JOIN(t, size)` hint or no
 * side rangejoin would buffer ([[rangejoin.planning.BufferedSide]]) and no buffering or cartesian hint. Everything
 * else is left as it is; nothing here throws on a shape it does not take.
 *
 * The band `l.a >= r.lo AND l.b <= r.hi` (any strictness) implies `r.lo <= l.a` and `l.b <= r.hi`.
 *  - `l.a` and `l.b` the same expression: a point `l.a` in the interval `[r.lo, r.hi]`;
 *  - `r.lo` and `r.hi` the same: a point `r.lo` in `[l.b, l.a]`;
 *  - otherwise two intervals, `L = [min(l.a, l.b), max(..)]` and `R = [min(r.lo, r.hi), max(..)]`.
 *    The band implies they intersect (`min L <= l.b <= r.hi <= max R` and `min R <= r.lo <= l.a
 *    <= max L`). Both sides are copied to their bins and one equi-join on bins meets each
 *    intersecting pair once, on the bin of `max(min L, min R)` ([[BinGrid]]'s overlap copies).
 *    Both intervals may be inverted or points as written; the min/max make them intervals.
 */
private[rangejoin] object BinnedRangeJoin extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!RangeJoinConf.enabled(conf) || !RangeJoinConf.binning(conf)) plan
    else plan.transformUpWithPruning(_.containsPattern(JOIN)) {
      case join: Join => rewrite(join, conf).getOrElse(join)
    }

  /** Marks the bin columns, so that a rewritten join is never rewritten again. */
  private val BinMarker = "rangejoin.bin"
  private val marked: Metadata = new MetadataBuilder().putBoolean(BinMarker, value = true).build()

  def rewrite(join: Join, conf: org.apache.spark.sql.internal.SQLConf): Option[LogicalPlan] = for {
    condition <- join.condition
    if !isRewritten(condition) && Evaluable(condition)
    // Each side is read more than once (the grid's subquery and the join, an outer join's anti
    // join): only a side that gives the same rows every time may be.
    if join.left.deterministic && join.right.deterministic
    preserved <- preservedSides(join, condition)
    binHint = RangeJoinHints.binSize(join.hint)
    if !RangeJoinHints.onLeft(join.hint) && !RangeJoinHints.onRight(join.hint)
    if binHint.isDefined ||
      (BufferedSide.of(join, conf).isEmpty && !BufferedSide.hintToShuffleReplicateNL(join.hint))
    band <- ConditionSplit.split(condition, join.left, join.right, streamedIsLeft = true)
    if band.isBand
    keys = band.predicates.flatMap(p => Seq(p.leftKey, p.rightKey))
    if keys.forall(k => CannotFail(k) && BinKeys.supports(k.dataType)) &&
      keys.map(_.dataType).distinct.size == 1
  } yield {
    val pairs = innerPairs(join.copy(joinType = Inner), condition, band.predicates, keys, binHint)
    if (preserved.isEmpty) pairs
    else Union(pairs +: preserved.map(unmatched(join, condition, _, pairs)))
  }

  /** The inner join's pairs, as an equi-join on bins. */
  private def innerPairs(
      join: Join,
      condition: Expression,
      predicates: Seq[RangePredicate],
      keys: Seq[Expression],
      binHint: Option[Double]): LogicalPlan = {
    val binSize = binHint.map(size => inKeyUnits(size, keys.head))
    val (below, above) = predicates.partition(_.op.isLess)
    val (la, rlo) = (above.head.leftKey, above.head.rightKey) // r.lo <= l.a
    val (lb, rhi) = (below.head.leftKey, below.head.rightKey) // l.b <= r.hi
    if (la.semanticEquals(lb)) {
      binned(join, condition, pointIsLeft = true, la, rlo, rhi, binSize)
    } else if (rlo.semanticEquals(rhi)) {
      binned(join, condition, pointIsLeft = false, rlo, lb, la, binSize)
    } else {
      overlapping(join, condition, Least(Seq(la, lb)), Greatest(Seq(la, lb)),
        Least(Seq(rlo, rhi)), Greatest(Seq(rlo, rhi)), binSize)
    }
  }

  /**
   * The sides an outer join preserves (none for an inner join); None for other join types, and
   * for outer joins whose preserved side's columns in the condition do not identify its rows'
   * matches (below).
   *
   * An outer join is its inner pairs plus each preserved row with no pair, padded with NULLs.
   * Whether a row has a pair depends only on its columns the condition reads: two rows equal in
   * those have the same pairs. So the unmatched rows are the preserved side's rows whose values in
   * those columns are not among the pairs' (an anti join on them, NULL equal to NULL), each kept
   * with its multiplicity. "Equal" must mean "behaves the same in the condition": not for floating
   * point (-0.0 equals 0.0, NaNs differ in bits), collated strings or nested types.
   */
  private def preservedSides(join: Join, condition: Expression): Option[Seq[LogicalPlan]] = {
    def identifies(side: LogicalPlan) =
      side.output.filter(condition.references.contains).forall(a => KeyTypes.identity(a.dataType))
    val sides = join.joinType match {
      case _: InnerLike => Some(Nil)
      case LeftOuter => Some(Seq(join.left))
      case RightOuter => Some(Seq(join.right))
      case FullOuter => Some(Seq(join.left, join.right))
      case _ => None
    }
    sides.filter(_.forall(identifies))
  }


  /** The rows of `side` (preserved by `join`) that have no pair in `pairs`, padded with NULLs. */
  private def unmatched(join: Join, condition: Expression, side: LogicalPlan, pairs: LogicalPlan)
      : LogicalPlan = {
    val read = side.output.filter(condition.references.contains)
    val matched = read.map(a => Alias(a, a.name)())
    // Distinct, as an Aggregate: Spark replaces Distinct before this rule runs.
    val keys = Aggregate(matched.map(_.toAttribute), matched.map(_.toAttribute), Project(matched, pairs))
    val anti = Join(side, keys, LeftAnti,
      read.zip(matched).map { case (a, m) => EqualNullSafe(a, m.toAttribute): Expression }.reduceOption(And),
      JoinHint.NONE)
    val sideIds = side.outputSet
    Project(join.output.map { a =>
      if (sideIds.contains(a)) a else Alias(Literal(null, a.dataType), a.name)()
    }, anti)
  }

  /**
   * `join` as an equi-join on bins of the point `point` (on the left or the right) and the
   * interval `[lo, hi]` on the other side, with `condition`, projected to the join's own output.
   */
  private def binned(
      join: Join,
      condition: Expression,
      pointIsLeft: Boolean,
      point: Expression,
      lo: Expression,
      hi: Expression,
      binSize: Option[Long]): LogicalPlan = {
    val (pointSide, intervalSide) = if (pointIsLeft) (join.left, join.right) else (join.right, join.left)
    val grid = ScalarSubquery(gridOf(intervalSide, lo, hi, binSize))
    val (pointBin, points) = generate(RangeJoinPointBins(point, grid), pointSide)
    val (intervalBin, intervals) = generate(RangeJoinIntervalBins(lo, hi, grid), intervalSide)
    val onBins = And(EqualTo(pointBin, intervalBin), condition)
    val (left, right) = if (pointIsLeft) (points, intervals) else (intervals, points)
    Project(join.output, Join(left, right, Inner, Some(onBins), join.hint))
  }

  /**
   * `join` as one equi-join on bins of the intervals `[lLo, lHi]` on the left and `[rLo, rHi]` on
   * the right, which `condition` implies intersect: both sides are copied to their bins
   * ([[RangeJoinOverlapBins]]), and a pair is kept only on the one (level, bin) where one copy is on
   * its own level and one at its first bin (see [[BinGrid]]), before `condition` is evaluated.
   */
  private def overlapping(
      join: Join,
      condition: Expression,
      lLo: Expression,
      lHi: Expression,
      rLo: Expression,
      rHi: Expression,
      binSize: Option[Long]): LogicalPlan = {
    val grid = ScalarSubquery(overlapGridOf(join.left, lLo, lHi, join.right, rLo, rHi, binSize))
    val (l, left) = generateCopies(RangeJoinOverlapBins(lLo, lHi, grid, isLeft = true), join.left)
    val (r, right) = generateCopies(RangeJoinOverlapBins(rLo, rHi, grid, isLeft = false), join.right)
    val once = And(Or(l(1), r(1)), Or(l(2), r(2)))
    val onBins = And(And(EqualTo(l(0), r(0)), once), condition)
    Project(join.output, Join(left, right, Inner, Some(onBins), join.hint))
  }

  /** The child with one row per copy of its interval: (bin key, own level, first bin). */
  private def generateCopies(copies: Expression, child: LogicalPlan): (Seq[Attribute], LogicalPlan) = {
    val copy = BinKeys.OverlapCopyType.map(f =>
      AttributeReference(f.name, f.dataType, nullable = false, marked)(): Attribute)
    (copy, Generate(Inline(copies), Nil, outer = false, None, copy, child))
  }

  /**
   * The overlap grid as one row over both sides: as [[gridOf]], over the intervals of both, with
   * each side's levels apart (an interval is copied only to levels the other side uses).
   */
  private def overlapGridOf(
      left: LogicalPlan,
      lLo: Expression,
      lHi: Expression,
      right: LogicalPlan,
      rLo: Expression,
      rHi: Expression,
      binSize: Option[Long]): LogicalPlan = {
    // One column of both sides' intervals (a level bit, or a span exponent) and which side.
    def measures(measure: (Expression, Expression) => Expression) = {
      def side(plan: LogicalPlan, lo: Expression, hi: Expression, isLeft: Boolean) = Project(Seq(
        Alias(measure(lo, hi), "rangejoin_measure")(),
        Alias(Literal(isLeft), "rangejoin_is_left")()), plan)
      val union = Union(side(left, lLo, lHi, isLeft = true), side(right, rLo, rHi, isLeft = false))
      (union.output.head, union.output(1), union)
    }
    def levelsOf(bit: Expression, isLeft: Expression, ofLeft: Boolean) = Alias(BitOrAgg(
      If(if (ofLeft) isLeft else Not(isLeft), bit, Literal(0L))).toAggregateExpression(),
      if (ofLeft) "rangejoin_left_levels" else "rangejoin_right_levels")()
    binSize match {
      case Some(size) =>
        val (bit, isLeft, union) = measures(RangeJoinLevelBit(_, _, size))
        val (l, r) = (levelsOf(bit, isLeft, ofLeft = true), levelsOf(bit, isLeft, ofLeft = false))
        Project(Seq(Alias(RangeJoinOverlapHintGrid(l.toAttribute, r.toAttribute, size), "rangejoin_grid")()),
          Aggregate(Nil, Seq(l, r), union))
      case None =>
        BinGridOf(Union(spans(left, lLo, lHi, true), spans(right, rLo, rHi, false)), overlap = true)
    }
  }

  /**
   * One row per row of `plan`: its interval's span exponent, the side it is on, its length and
   * its start and end as longs ([[BinGridOf]]'s columns); all four NULL where it is no interval.
   */
  private def spans(plan: LogicalPlan, lo: Expression, hi: Expression, isLeft: Boolean): LogicalPlan = {
    val length = Alias(RangeJoinSpanLength(lo, hi), "rangejoin_length")()
    val (start, end) = (Alias(RangeJoinKeyAsLong(lo), "rangejoin_lo")(), Alias(RangeJoinKeyAsLong(hi), "rangejoin_hi")())
    // Only intervals (both bounds, lo <= hi: a length) count towards the key range.
    def ofInterval(e: Attribute, name: String) =
      Alias(If(IsNull(length.toAttribute), Literal(null, LongType), e), name)()
    Project(Seq(
      Alias(RangeJoinSpanExponent(lo, hi), "rangejoin_exponent")(),
      Alias(Literal(isLeft), "rangejoin_is_left")(),
      length.toAttribute,
      ofInterval(start.toAttribute, "rangejoin_start"),
      ofInterval(end.toAttribute, "rangejoin_end")),
      Project(plan.output ++ Seq(length, start, end), plan))
  }

  /** The child with one row per bin key of `keys` ([[BinKeys.key]]). */
  private def generate(keys: Expression, child: LogicalPlan): (Attribute, LogicalPlan) = {
    val bin = AttributeReference("rangejoin_bin", LongType, nullable = false, marked)()
    (bin, Generate(Explode(keys), Nil, outer = false, None, Seq(bin), child))
  }

  /**
   * The grid (base bin size, levels holding intervals) as one row over the interval side: with a
   * hinted size, the levels its intervals fall on; otherwise base `2^p` for `p` the
   * [[SpanStatistics.Percentile]] of the intervals' span exponents, and the levels those fall on
   * ([[BinGridOf]]). Each is exact and independent of row order (an overlap grid's summed lengths
   * are added in partition order), so the subquery gives the same grid each time it runs over
   * the same input (both sides read it, whether or not Spark reuses one run).
   */
  private def gridOf(intervals: LogicalPlan, lo: Expression, hi: Expression, binSize: Option[Long])
      : LogicalPlan = binSize match {
    case Some(size) =>
      val bit = Alias(RangeJoinLevelBit(lo, hi, size), "rangejoin_level_bit")()
      val levels = Alias(BitOrAgg(bit.toAttribute).toAggregateExpression(), "rangejoin_levels")()
      val aggregate = Aggregate(Nil, Seq(levels), Project(Seq(bit), intervals))
      Project(Seq(Alias(RangeJoinHintGrid(levels.toAttribute, size), "rangejoin_grid")()), aggregate)
    case None => BinGridOf(spans(intervals, lo, hi, true), overlap = false)
  }

  /** A hint's bin size in the keys' units: seconds for timestamps (microseconds inside). */
  private def inKeyUnits(size: Double, key: Expression): Long = {
    val units = key.dataType match {
      case TimestampType | TimestampNTZType => size * 1e6
      case _ => size
    }
    math.max(1L, math.ceil(units).toLong) // toLong saturates at Long.MaxValue
  }

  private def isRewritten(condition: Expression): Boolean =
    condition.references.exists(_.metadata.contains(BinMarker))

  /** Whether `e` is a bin column this rule made (a bin key or a copy's flag). */
  def isBin(e: Expression): Boolean = e match {
    case a: Attribute => a.metadata.contains(BinMarker)
    case _ => false
  }
}
