package rangejoin.bins

/**
 * The bins of a binned range join ([[rangejoin.planning.BinnedRangeJoin]]): nested grids over the
 * longs, one per level, each `Factor` times coarser than the one below.
 * {{{
 *   level 2   |                               bin 0                              |   size b * 64
 *   level 1   |   bin 0   |   bin 1   |   bin 2   |   bin 3   |  ...  |   bin 7   |   size b * 8
 *   level 0   |0|1|2|3|4|5|6|7|8|9| ...                                      |63|   size b
 *
 *   interval  [=====]            spans 3 bins at level 0: stays there, 3 copies
 *   interval  [=========================]   spans 13 at level 0, 4 at level 1: one level up, 4 copies
 *   point       x                one bin per level that holds intervals: (0, 2), (1, 0), ...
 * }}}
 * An interval lives on the lowest level where it spans at most `MaxBins` bins, so no interval is
 * copied more than `MaxBins` times (at the top level, whose bins are too large to grow by
 * `Factor` again, at most `TopLevelBins`): a long interval costs a few copies, not one per bin of
 * the base size. Each point gets one bin on every level that holds some interval, and a point and
 * an interval that contains it share exactly one (level, bin): the interval's level, and there
 * the point's bin, which the interval covers. So an equi-join on (level, bin) meets every matching
 * pair exactly once.
 *
 * Two intervals (an overlap join) each go on their own level, and are also copied to the levels
 * above that hold intervals of the other side ([[overlapLevels]]). Intersecting intervals share the
 * bin of the later start on the higher of their two levels: there one of them is on its own level
 * and one has its first bin. On any other shared (level, bin) one of those fails: a lower level is
 * neither's own, and a bin past the later start's is neither's first. So the equi-join on (level,
 * bin), with "one is on its own level and one is at its first bin", meets every intersecting pair
 * exactly once, in one join and with each side copied once.
 *
 * Everything is exact integer arithmetic that cannot overflow or raise: floor division by a
 * positive size, and bin counts compared without subtracting past the long range.
 */
private[rangejoin] object BinGrid {

  /** Each level's bins are this many times the size of the level below's. */
  val Factor = 8
  val FactorBits = 3

  /** An interval moves up a level when it spans more bins than this. */
  val MaxBins = 4

  /** The most bins an interval spans on the top level (bins of 2^60 or more cover the longs in 16). */
  val TopLevelBins = 16

  /**
   * The bin of `x` in bins of `size` (> 0): floor(x / size), also for negatives. A size that is a
   * power of two (every size of a grid chosen from the data) is an arithmetic shift, which floors
   * as the division does: a division took 7% of an overlap join's time (a span exponent alone
   * tries several sizes).
   */
  def bin(x: Long, size: Long): Long =
    if ((size & (size - 1)) == 0) x >> java.lang.Long.numberOfTrailingZeros(size) else Math.floorDiv(x, size)

  /**
   * How many bins of `size` `[lo, hi]` (lo <= hi) covers, on a level it is copied to: at most
   * TopLevelBins (see [[levelOf]] and [[overlapLevels]]), so the count is an int and
   * `bin(lo, size) + k` never wraps for k below it.
   */
  def binCount(lo: Long, hi: Long, size: Long): Int = (bin(hi, size) - bin(lo, size) + 1).toInt

  /** Whether bins of `size` are the top level's: one more factor would overflow a long. */
  def isTop(size: Long): Boolean = size > Long.MaxValue / Factor

  /** The size of level `level`'s bins over base size `base`, or -1 past the top level. */
  def sizeAt(base: Long, level: Int): Long = {
    var size = base
    var l = 0
    while (l < level) {
      if (isTop(size)) return -1
      size *= Factor
      l += 1
    }
    size
  }

  /** Whether `[lo, hi]` (lo <= hi) spans at most `max` bins of `size`. */
  def spansAtMost(lo: Long, hi: Long, size: Long, max: Int): Boolean = {
    val d = bin(hi, size) - bin(lo, size) // >= 0 unless it wrapped past Long.MaxValue
    d >= 0 && d < max
  }

  /** The level of `[lo, hi]` (lo <= hi) over base size `base`. */
  def levelOf(lo: Long, hi: Long, base: Long): Int = {
    var size = base
    var level = 0
    while (!spansAtMost(lo, hi, size, MaxBins) && !isTop(size)) {
      size *= Factor
      level += 1
    }
    level
  }

  /**
   * The levels an interval on level `own` is copied to in an overlap join, ascending: its own, and
   * every level above it that holds some interval of the other side (`otherLevels`, a bit mask),
   * up to the top level over `base`. Two intersecting intervals then meet on the higher of their
   * two levels, where both have copies; above its own level an interval spans at most two bins
   * (its at most `MaxBins` bins nest in at most two of the next level's).
   */
  def overlapLevels(own: Int, otherLevels: Long, base: Long): Array[Int] = {
    val levels = Array.newBuilder[Int]
    levels += own
    var l = own + 1
    while (l < 64 && sizeAt(base, l) > 0) {
      if ((otherLevels & (1L << l)) != 0) levels += l
      l += 1
    }
    levels.result()
  }

  /**
   * The smallest exponent `e` (0 to 62) such that `[lo, hi]` spans at most `MaxBins` bins of size
   * 2^e, or 63 if none does. Over a base size `2^p` the interval's level is then
   * [[levelOfExponent]]`(e, p)`: the grids `2^(p + 3l)` are among the grids `2^e`, bins nest, so the
   * span only shrinks as `e` grows, and the level is the first `l` with `p + 3l >= e`, capped at
   * the top level.
   */
  def exponentOf(lo: Long, hi: Long): Int = {
    var e = 0
    while (e <= 62 && !spansAtMost(lo, hi, 1L << e, MaxBins)) e += 1
    e
  }

  /** The level over base size `2^p` of an interval whose [[exponentOf]] is `e`. */
  def levelOfExponent(e: Int, p: Int): Int = {
    // The top level: the first whose bins, 2^(p + 3l) >= 2^60, are too large to grow by 8 again.
    val top = math.max(0, (60 - p + FactorBits - 1) / FactorBits)
    val wanted = if (e <= p) 0 else (e - p + FactorBits - 1) / FactorBits
    math.min(wanted, top)
  }

  /**
   * The base exponent `p` (bins of 2^p) for a percentile of the intervals' exponents (or null):
   * two more than it, so that those intervals, which span up to `MaxBins` bins of 2^e, span one or
   * two of 2^p (bins of about their length): fewer copies, for a few more candidates per point.
   */
  def baseExponent(percentile: Option[Double]): Int =
    percentile.filterNot(_.isNaN).map(p => math.max(0, math.min(60, math.floor(p).toInt + 2))).getOrElse(0)

  /**
   * How many candidate pairs an interval copy is worth: a copy is a row shuffled and sorted, a
   * candidate one comparison in the join (fitted on W12's overlap: docs/design.md, the bin size).
   */
  val CopyCost = 64.0

  /** How far (in powers of 2) an overlap join's bins may grow past the length-based size. */
  val MaxWiden = 4

  /**
   * The base exponent of an overlap join's bins: the length-based one `p` ([[baseExponent]])
   * widened towards the size that minimizes copies plus candidate pairs, for `n` intervals a side
   * of mean length `len` over a key range of `domain`. With bins of `B`, a side's intervals make
   * about `n (1 + len / B)` copies, and about `nA nB (B + lenA) (B + lenB) / (domain B)` pairs
   * share a bin (uniform spread); the sum with copies weighted [[CopyCost]] is least at
   * `B^2 = CopyCost domain (nA lenA + nB lenB) / (nA nB) + lenA lenB`. Never below `p` (more
   * copies), and at most [[MaxWiden]] above it: the estimate assumes spread-out keys, and where
   * they cluster a wide bin holds many more pairs than it predicts.
   */
  def overlapBaseExponent(p: Int, nA: Long, nB: Long, lenA: Double, lenB: Double, domain: Double): Int = {
    if (nA <= 0 || nB <= 0 || !(domain > 0) || lenA.isNaN || lenB.isNaN) return p
    val (meanA, meanB) = (lenA / nA, lenB / nB)
    val squared = CopyCost * domain * (nA * meanA + nB * meanB) / (nA.toDouble * nB) + meanA * meanB
    val best = math.ceil(math.log(math.sqrt(squared)) / math.log(2))
    if (best.isNaN) p else math.max(p, math.min(math.min(p + MaxWiden, 60), best.toInt))
  }

  /** The levels (a bit mask) over base `2^p` of intervals with the exponents in `exponentMask`. */
  def levelMaskOfExponents(exponentMask: Long, p: Int): Long = {
    var mask = 0L
    for (e <- 0 to 63 if (exponentMask & (1L << e)) != 0) mask |= 1L << levelOfExponent(e, p)
    mask
  }
}
