package rangejoin.execution.index

/**
 * Consecutive ranges of times (order-preserving longs) that split an as-of join with no keys
 * across tasks: range i holds the times t with `splits(i - 1) <= t < splits(i)`, so every time of
 * range i is above every time of range i - 1.
 * {{{
 *   splits      10        20        30
 *   ranges   0: < 10  1: [10, 20)  2: [20, 30)  3: >= 30
 * }}}
 * The splits are quantiles of a sample of both sides' times, as Spark's range partitioner
 * draws them: about as many rows in each range.
 */
private[rangejoin] final case class TimeRanges(splits: Array[Long]) {

  def count: Int = splits.length + 1

  /** The range of time `t`: the number of splits at or below it. */
  def of(t: Long): Int = {
    var lo = 0
    var hi = splits.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (splits(mid) <= t) lo = mid + 1 else hi = mid
    }
    lo
  }
}

private[rangejoin] object TimeRanges {

  /** One range: every time in one task. */
  val single: TimeRanges = TimeRanges(Array.emptyLongArray)

  /** At most `n` ranges, split at quantiles of the sampled times (fewer where times repeat). */
  def fromSample(sample: Array[Long], n: Int): TimeRanges = {
    if (n <= 1 || sample.isEmpty) return single
    val sorted = sample.sorted
    val splits = (1 until n).map(i => sorted(((i.toLong * sorted.length) / n).toInt)).distinct
    // A split at the smallest time would leave range 0 empty.
    TimeRanges(splits.filter(_ > sorted.head).toArray)
  }

  /**
   * At most `size` of a partition's times (reservoir sampling, seeded), and their least and
   * greatest (Long.MaxValue and Long.MinValue when there are none): [[add]] each time, then
   * [[result]]. A time is a primitive here, not an element of an `Iterator[Long]` (boxed).
   */
  final class Sampler(size: Int, seed: Long) {
    private[this] val reservoir = new Array[Long](size)
    // Not scala.util.Random: java.util.Random's atomic update on each draw cost more than the
    // rest of the pass over the times.
    private[this] val random = new java.util.SplittableRandom(seed)
    private[this] var seen = 0L
    private[this] var min = Long.MaxValue
    private[this] var max = Long.MinValue

    def add(t: Long): Unit = {
      if (seen < size) reservoir(seen.toInt) = t
      else {
        val j = random.nextLong(seen + 1)
        if (j < size) reservoir(j.toInt) = t
      }
      seen += 1
      if (t < min) min = t
      if (t > max) max = t
    }

    def result: (Array[Long], Long, Long) = (reservoir.take(math.min(seen, size.toLong).toInt), min, max)
  }
}

/**
 * One task's right rows nearest each range of time from outside it, which the task sends to that
 * range's task beside its own rows: into range p, the latest of its rows in the ranges before p
 * (backward, nearest) and the earliest of those after p (forward, nearest).
 * {{{
 *   ranges                  0        |  1        |  2        |  3
 *   this task's rows        2 7      |           |  23 25    |
 *   carried, backward       -        |  7        |  7        |  25
 *   carried, forward        23       |  23       |  -        |  -
 * }}}
 * Every task carries its own; range p's task searches them with its own rows, so the nearest of
 * all reaches each left row without a job that gathers them first. Among equal times a range keeps
 * the last row it met as its latest and the first as its earliest, as the search picks among
 * equal times (backward the last, forward the first).
 *
 * @param keep the copy of a row to hold past the row's turn (a task's input rows are reused)
 */
private[rangejoin] final class RangeEdges[R <: AnyRef](count: Int, backward: Boolean, forward: Boolean, keep: R => R) {
  private[this] val firstTime = new Array[Long](count)
  private[this] val firstRow = new Array[AnyRef](count)
  private[this] val lastTime = new Array[Long](count)
  private[this] val lastRow = new Array[AnyRef](count)

  /** Notes `row`, of time `t` in range `range`. */
  def add(range: Int, t: Long, row: R): Unit = {
    var kept: AnyRef = null
    if (forward && (firstRow(range) == null || t < firstTime(range))) {
      kept = keep(row)
      firstTime(range) = t
      firstRow(range) = kept
    }
    if (backward && (lastRow(range) == null || t >= lastTime(range))) {
      if (kept == null) kept = keep(row)
      lastTime(range) = t
      lastRow(range) = kept
    }
  }

  /**
   * The rows to carry, each with the range it goes to. The ranges are ordered by time, so the
   * latest row before range p is the latest of the last range before p that has rows.
   */
  def carried: Seq[(Int, R)] = {
    val out = scala.collection.mutable.ArrayBuffer.empty[(Int, R)]
    if (backward) {
      var latest: AnyRef = null
      for (p <- 0 until count) {
        if (latest != null) out += ((p, latest.asInstanceOf[R]))
        if (lastRow(p) != null) latest = lastRow(p)
      }
    }
    if (forward) {
      var earliest: AnyRef = null
      for (p <- count - 1 to 0 by -1) {
        if (earliest != null) out += ((p, earliest.asInstanceOf[R]))
        if (firstRow(p) != null) earliest = firstRow(p)
      }
    }
    out.toSeq
  }
}
