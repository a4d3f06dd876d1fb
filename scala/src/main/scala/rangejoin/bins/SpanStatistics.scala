package rangejoin.bins

/**
 * What the bin grid is chosen from, gathered in one pass over a task's intervals: per side, how
 * many intervals have each span exponent ([[BinGrid.exponentOf]]), their summed length and the
 * keys' range. A task adds its rows and sends them as longs ([[toLongs]]), the driver merges the
 * tasks' in partition order, and [[values]] gives the nine statistics the grid expressions read,
 * as Spark's aggregates would (grouped per exponent and side, then a weighted `percentile`,
 * `bit_or`, `sum`, `min`, `max`), NULLs included:
 * {{{
 *   task 1: add(side, exponent, length, start, end) per row ─┐
 *   task 2: ...                                               ├─ merge ─> values: percentile,
 *   task n: ...                                              ─┘            levels, n, length, range
 * }}}
 * One Spark job of one stage, where the aggregates took two to four (and a stage of one task
 * each between them) before the join's map stages could start.
 *
 * No Spark here: [[rangejoin.execution.BinGridExec]] feeds it rows.
 */
private[rangejoin] final class SpanStatistics private (
    // By side (0 left, 1 right), then exponent (0 to 63). An interval's length, start and end are
    // added exactly where its exponent is counted, so a side's counts say whether it has any.
    private val counts: Array[Array[Long]],
    // Rows seen of each side, exponent or not: a side with rows is a group to Spark's aggregates.
    private val rows: Array[Long],
    private val summed: Array[Double],
    private var lowest: Long,
    private var highest: Long) {
  import SpanStatistics._

  def this() = this(Array.fill(2)(new Array[Long](SpanStatistics.Exponents)), new Array[Long](2), new Array[Double](2),
    Long.MaxValue, Long.MinValue)

  private def intervals(side: Int): Long = counts(side).sum

  /**
   * One interval of `side` (0 left, 1 right): its span exponent, or -1 for none (a NULL bound or
   * an inverted interval); its length, start and end, each only where it has an exponent.
   */
  def add(side: Int, exponent: Int, length: Double, start: Long, end: Long): Unit = {
    rows(side) += 1
    if (exponent >= 0) {
      counts(side)(exponent) += 1
      summed(side) += length
      if (start < lowest) lowest = start
      if (end > highest) highest = end
    }
  }

  /**
   * These statistics as longs, the form a task returns them in: primitive arrays in tuples, as
   * Spark's own jobs return, serialize under any `spark.serializer` (Kryo with
   * `spark.kryo.registrationRequired` refuses a class of rangejoin's).
   */
  def toLongs: Array[Long] =
    counts(0) ++ counts(1) ++ rows ++ summed.map(java.lang.Double.doubleToRawLongBits) ++ Array(lowest, highest)

  /** Adds `other`'s counts to these (the driver, in partition order: the sums' order is fixed). */
  def merge(other: SpanStatistics): SpanStatistics = {
    for (side <- 0 to 1) {
      for (e <- 0 until Exponents) counts(side)(e) += other.counts(side)(e)
      rows(side) += other.rows(side)
      summed(side) += other.summed(side)
    }
    lowest = math.min(lowest, other.lowest)
    highest = math.max(highest, other.highest)
    this
  }

  /**
   * The nine statistics, boxed as Spark's rows hold them, NULL (null) where Spark's aggregate of
   * the same rows gives NULL: the [[Percentile]] of every exponent (both sides); each side's
   * exponents as a bit mask; each side's interval count; each side's summed length; the lowest
   * start and the highest end.
   */
  def values: Array[Any] = {
    val any = rows(0) + rows(1) > 0
    val hasRange = intervals(0) + intervals(1) > 0
    // Spark's per-side aggregates read If(side, value, 0) over the groups: the other side's
    // groups give 0, so a side's value is NULL only where the other side has no rows either.
    def levels(side: Int): Any = {
      val mask = (0 until Exponents).filter(counts(side)(_) > 0).foldLeft(0L)((m, e) => m | (1L << e))
      if (mask == 0L && rows(1 - side) == 0) null else mask
    }
    def length(side: Int): Any = if (intervals(side) == 0 && rows(1 - side) == 0) null else summed(side)
    Array[Any](
      percentile(Array.tabulate(Exponents)(e => counts(0)(e) + counts(1)(e)), Percentile).orNull,
      levels(0), levels(1),
      if (any) counts(0).sum else null, if (any) counts(1).sum else null,
      length(0), length(1),
      if (hasRange) lowest else null, if (hasRange) highest else null)
  }
}

private[rangejoin] object SpanStatistics {

  /** The statistics read back from [[SpanStatistics.toLongs]]. */
  def fromLongs(in: Array[Long]): SpanStatistics = {
    require(in.length == Encoded, s"span statistics of ${in.length} longs, not $Encoded")
    val at = 2 * Exponents
    new SpanStatistics(Array(in.slice(0, Exponents), in.slice(Exponents, at)), in.slice(at, at + 2),
      in.slice(at + 2, at + 4).map(java.lang.Double.longBitsToDouble), in(at + 4), in(at + 5))
  }

  // Counts, rows, summed lengths' bits, lowest, highest.
  private val Encoded = 2 * 64 + 6

  /** Span exponents run from 0 to 63 ([[BinGrid.exponentOf]]). */
  val Exponents = 64

  /** The percentile of the span exponents that sets the base bin size. */
  val Percentile = 0.9

  /**
   * The `p` percentile of the exponents counted in `counts` (index = exponent), as Spark's
   * `percentile` defines it: position `(n - 1) p` among the sorted values, interpolated linearly
   * between the two values either side; None where nothing is counted. (Spark's lines round the
   * interpolation differently in the last bit; the grid reads only its floor, and any grid is
   * exact: it chooses candidates, the join's condition decides.)
   */
  def percentile(counts: Array[Long], p: Double): Option[java.lang.Double] = {
    val n = counts.sum
    if (n == 0) return None
    val position = (n - 1) * p
    val (lower, higher) = (math.floor(position).toLong, math.ceil(position).toLong)
    // The value at a 0-based position: the first exponent whose running count passes it.
    def at(rank: Long): Int = {
      var (e, seen) = (0, counts(0))
      while (seen <= rank) { e += 1; seen += counts(e) }
      e
    }
    val (lowerKey, higherKey) = (at(lower), at(higher))
    val value =
      if (higher == lower || higherKey == lowerKey) lowerKey.toDouble
      else lowerKey + (position - lower) * (higherKey - lowerKey)
    Some(value)
  }
}
