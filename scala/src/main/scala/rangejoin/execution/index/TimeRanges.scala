package rangejoin.execution.index

import scala.util.Random

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
   * greatest; Long.MaxValue and Long.MinValue when there are none.
   */
  def sample(times: Iterator[Long], size: Int, seed: Long): (Array[Long], Long, Long) = {
    val reservoir = new Array[Long](size)
    val random = new Random(seed)
    var seen = 0L
    var min = Long.MaxValue
    var max = Long.MinValue
    times.foreach { t =>
      if (seen < size) reservoir(seen.toInt) = t
      else {
        val j = (random.nextDouble() * (seen + 1)).toLong
        if (j < size) reservoir(j.toInt) = t
      }
      seen += 1
      if (t < min) min = t
      if (t > max) max = t
    }
    (reservoir.take(math.min(seen, size.toLong).toInt), min, max)
  }
}
