package rangejoin.execution.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * LongSearch against its definition, the first position of a window whose key is above a value
 * (or at or above it): each of its three forms over random windows, and the choice between them
 * over a long run of values in order and in none, in windows on both sides of the size past
 * which it always branches. The keys are segments sorted apart, as a per-key buffer's are.
 */
class LongSearchSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val extremes = Seq(Long.MinValue, Long.MinValue + 1, Long.MaxValue - 1, Long.MaxValue)

  /** Segments of keys, each sorted by itself, drawn from `pool`; their bounds. */
  private def segments(random: Random, pool: IndexedSeq[Long], count: Int, maxLength: Int): (Array[Long], Seq[(Int, Int)]) = {
    val parts = Seq.fill(count)(Array.fill(random.nextInt(maxLength + 1))(pool(random.nextInt(pool.size))).sorted)
    val starts = parts.scanLeft(0)(_ + _.length)
    (parts.flatten.toArray, starts.zip(starts.tail))
  }

  /** A window of a segment: the whole of it, or a random part. */
  private def windowOf(random: Random, segment: (Int, Int)): (Int, Int) = segment match {
    case (from, until) if random.nextBoolean() || until == from => (from, until)
    case (from, until) =>
      val a = from + random.nextInt(until - from + 1)
      (a, a + random.nextInt(until - a + 1))
  }

  private def naive(keys: Array[Long], from: Int, until: Int, v: Long, orEqual: Boolean): Int = {
    var i = from
    while (i < until && !(keys(i) > v || (orEqual && keys(i) == v))) i += 1
    i
  }

  test("every form finds the first key above (or at) v in a window of segments sorted apart") {
    val random = new Random(27)
    for (_ <- 0 until 3000) {
      val pool = Vector.fill(1 + random.nextInt(8))(random.nextInt(40).toLong - 10) ++
        (if (random.nextInt(3) == 0) extremes else Nil)
      val (keys, bounds) = segments(random, pool, count = 1 + random.nextInt(4), maxLength = 120)
      // Fences on any buffer: windows of every alignment to their blocks of 8.
      val search = new LongSearch(keys, fencesFrom = 0)
      val (from, until) = windowOf(random, bounds(random.nextInt(bounds.size)))
      val v = pool(random.nextInt(pool.size)) + random.nextInt(3) - 1
      for (orEqual <- Seq(true, false)) {
        val expected = naive(keys, from, until, v, orEqual)
        val context = s"keys=${keys.mkString(",")} [$from, $until) v=$v orEqual=$orEqual"
        assert(search.firstAboveBranching(from, until, v, orEqual) == expected, s"branching: $context")
        assert(search.firstAboveBranchFree(from, until, v, orEqual) == expected, s"branch-free: $context")
        assert(search.firstAboveFenced(from, until, v, orEqual) == expected, s"fenced: $context")
      }
    }
  }

  test("one search over windows on both sides of its large size, values in order and then in none, answers throughout") {
    val random = new Random(28)
    val pool = Vector.fill(50000)(random.nextLong() >> 20) ++ extremes
    val (keys, bounds) = segments(random, pool, count = 3, maxLength = 2 * LongSearch.LargeWindow)
    val search = new LongSearch(keys)
    val inOrder = Vector.fill(2 * LongSearch.Block)(pool(random.nextInt(pool.size))).sorted
    val noOrder = Seq.fill(4 * LongSearch.Block)(pool(random.nextInt(pool.size)) + random.nextInt(3) - 1)
    var large, small = 0
    for ((v, i) <- (inOrder ++ noOrder ++ inOrder).zipWithIndex) {
      search.observe(v)
      val (from, until) = windowOf(random, bounds(i % bounds.size))
      if (until - from > LongSearch.LargeWindow) large += 1 else small += 1
      val orEqual = i % 2 == 0
      assert(search.firstAbove(from, until, v, orEqual) == naive(keys, from, until, v, orEqual),
        s"value $i: $v in [$from, $until) orEqual=$orEqual")
    }
    assert(large > LongSearch.Block && small > LongSearch.Block, s"windows: $large large, $small not")
  }
}
