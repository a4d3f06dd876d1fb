package rangejoin.execution.index

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * The ranges of time a keyless as-of join is split into: the sample they are drawn from (every
 * time while there are few, then a seeded uniform reservoir, and always the least and greatest),
 * and a time's range (the number of splits at or below it).
 */
class TimeRangesSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private def sample(times: Seq[Long], size: Int, seed: Long = 7L): (Array[Long], Long, Long) = {
    val sampler = new TimeRanges.Sampler(size, seed)
    times.foreach(sampler.add)
    sampler.result
  }

  test("no times: an empty sample, and bounds that every time passes") {
    val (kept, min, max) = sample(Nil, 10)
    assert(kept.isEmpty && min == Long.MaxValue && max == Long.MinValue)
  }

  test("fewer times than the sample's size: every one, in order, with their least and greatest") {
    val times = Seq(5L, -3L, Long.MaxValue, 9L)
    val (kept, min, max) = sample(times, 10)
    assert(kept.toSeq == times && min == -3L && max == Long.MaxValue)
  }

  test("more times: the sample's size, drawn from all of them, the same for a seed, the bounds exact") {
    val times = (0L until 100000L).map(i => (i * 7919L) % 100003L)
    val (kept, min, max) = sample(times, 1000)
    assert(kept.length == 1000 && kept.distinct.length == 1000 && kept.forall(times.toSet))
    assert(min == times.min && max == times.max)
    assert(sample(times, 1000)._1.toSeq == kept.toSeq)
    assert(sample(times, 1000, seed = 8L)._1.toSeq != kept.toSeq)
    // Uniform: as many of the kept times from each half of the input.
    val firstHalf = times.take(50000).toSet
    assert(math.abs(kept.count(firstHalf) - 500) < 80, kept.count(firstHalf))
  }

  test("a time's range counts the splits at or below it; ranges come from the sample's quantiles") {
    val ranges = TimeRanges(Array(10L, 20L, 30L))
    assert(Seq(Long.MinValue, 9L, 10L, 19L, 20L, 30L, Long.MaxValue).map(ranges.of) == Seq(0, 0, 1, 1, 2, 3, 3))
    val drawn = TimeRanges.fromSample((1L to 100L).toArray, 4)
    assert(drawn.count == 4 && drawn.splits.toSeq == Seq(26L, 51L, 76L))
    assert(TimeRanges.fromSample(Array.fill(50)(3L), 4).count == 1)
  }

  /** What one task carries, as (range, row name), for rows (name, time) met in this order. */
  private def carried(ranges: TimeRanges, rows: Seq[(String, Long)], backward: Boolean, forward: Boolean)
      : Seq[(Int, String)] = {
    val copies = scala.collection.mutable.ArrayBuffer.empty[String]
    val edges = new RangeEdges[String](ranges.count, backward, forward, { r => copies += r; r })
    rows.foreach { case (name, t) => edges.add(ranges.of(t), t, name) }
    // A row is copied once when it is kept, not once per range it is carried to.
    assert(copies.distinct.size == copies.size, copies)
    edges.carried.sortBy(_._1)
  }

  test("a task carries into each range its latest row before it and its earliest after it") {
    val ranges = TimeRanges(Array(10L, 20L, 30L))
    val rows = Seq("a" -> 7L, "b" -> 2L, "c" -> 25L, "d" -> 23L)
    assert(carried(ranges, rows, backward = true, forward = false) == Seq(1 -> "a", 2 -> "a", 3 -> "c"))
    assert(carried(ranges, rows, backward = false, forward = true) == Seq(0 -> "d", 1 -> "d"))
    assert(carried(ranges, rows, backward = true, forward = true).toSet ==
      Set(1 -> "a", 2 -> "a", 3 -> "c", 0 -> "d", 1 -> "d"))
  }

  test("among equal times the latest kept is the last met, the earliest the first met") {
    val ranges = TimeRanges(Array(10L))
    val rows = Seq("a" -> 5L, "b" -> 5L, "c" -> 12L, "d" -> 12L, "e" -> 15L)
    assert(carried(ranges, rows, backward = true, forward = true).toSet == Set(1 -> "b", 0 -> "c"))
  }

  test("no rows, or one range: nothing carried") {
    assert(carried(TimeRanges(Array(10L, 20L)), Nil, backward = true, forward = true).isEmpty)
    assert(carried(TimeRanges.single, Seq("a" -> 1L, "b" -> 2L), backward = true, forward = true).isEmpty)
  }
}
