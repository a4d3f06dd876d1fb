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
