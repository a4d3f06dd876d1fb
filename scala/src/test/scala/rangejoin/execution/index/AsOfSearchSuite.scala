package rangejoin.execution.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.OptionWhen
import rangejoin.condition.AsOfDirection
import rangejoin.differential.SharedAcrossSmokeLines

/**
 * AsOfSearch against its definition: for random sorted windows of times (duplicates, extremes)
 * and random left times and tolerance bounds, every direction, strict or not, finds exactly the
 * candidates the as-of condition admits, and picks the one an as-of join defines: backward the
 * latest time (the last of equal ones), forward the earliest (the first), nearest the nearer of
 * those two (the earlier when as near).
 */
class AsOfSearchSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val extremes = Seq(Long.MinValue, Long.MinValue + 1, Long.MaxValue - 1, Long.MaxValue)

  private def naive(keys: Array[Long], from: Int, until: Int, d: AsOfDirection, inclusive: Boolean, l: Long,
      lower: Option[Long], upper: Option[Long], boundsInclusive: Boolean): Int = {
    // Plain values, not Options, inside the loop below: the larger test calls this twelve thousand
    // times over five thousand keys.
    val (hasLower, lo, hasUpper, hi) = (lower.isDefined, lower.getOrElse(0L), upper.isDefined, upper.getOrElse(0L))
    def inBounds(k: Long) = (!hasLower || (if (boundsInclusive) k >= lo else k > lo)) &&
      (!hasUpper || (if (boundsInclusive) k <= hi else k < hi))
    def admitted(k: Long) = inBounds(k) && (d match {
      case AsOfDirection.Backward => if (inclusive) k <= l else k < l
      case AsOfDirection.Forward => if (inclusive) k >= l else k > l
      case AsOfDirection.Nearest => inclusive || k != l
    })
    // Every position, one by one: the first and last admitted, the last admitted key at or below
    // l and the first at or above it.
    var first, last, below, above = -1
    var i = from
    while (i < until) {
      val k = keys(i)
      if (admitted(k)) {
        if (first < 0) first = i
        last = i
        if (k <= l) below = i
        if (k >= l && above < 0) above = i
      }
      i += 1
    }
    def distance(i: Int) = BigInt(keys(i)) - BigInt(l)
    if (first < 0) -1
    else d match {
      case AsOfDirection.Backward => last
      case AsOfDirection.Forward => first
      case AsOfDirection.Nearest =>
        if (below >= 0 && above >= 0) { if (-distance(below) <= distance(above)) below else above }
        else math.max(below, above)
    }
  }

  test("every direction, strict or not, with and without bounds, picks the defined candidate") {
    val random = new Random(26)
    for (_ <- 0 until 3000) {
      // A sorted run of keys drawn from a small pool (duplicates; extremes at times), and a window of it.
      val n = random.nextInt(12)
      val pool = (0 until 8).map(_ => random.nextInt(10).toLong - 2) ++ (if (random.nextInt(4) == 0) extremes else Nil)
      val keys = Array.fill(n)(pool(random.nextInt(pool.size))).sorted
      val from = if (n == 0) 0 else random.nextInt(n)
      val until = from + random.nextInt(n - from + 1)
      val l = pool(random.nextInt(pool.size))
      val lower = OptionWhen(random.nextBoolean())(pool(random.nextInt(pool.size)))
      val upper = OptionWhen(random.nextBoolean())(pool(random.nextInt(pool.size)))
      val boundsInclusive = random.nextBoolean()
      for (d <- Seq(AsOfDirection.Backward, AsOfDirection.Forward, AsOfDirection.Nearest); inclusive <- Seq(true, false)) {
        val search = new AsOfSearch(keys, d, inclusive)
        search.locate(from, until, l, lower.isDefined, lower.getOrElse(0L), upper.isDefined, upper.getOrElse(0L),
          boundsInclusive)
        val expected = naive(keys, from, until, d, inclusive, l, lower, upper, boundsInclusive)
        assert(search.best == expected,
          s"$d inclusive=$inclusive keys=${keys.mkString(",")} [$from, $until) l=$l lower=$lower upper=$upper " +
            s"boundsInclusive=$boundsInclusive")
        if (expected >= 0) assert(search.isCandidate(expected, l))
      }
    }
  }

  test("one search over many left rows, in order and then in none, picks the defined candidate throughout") {
    val random = new Random(28)
    val keys = Array.fill(5000)(random.nextInt(3000).toLong).sorted
    val inOrder = (0 until 2 * LongSearch.Block).map(i => i * 6L)
    val noOrder = Seq.fill(4 * LongSearch.Block)(random.nextInt(3200).toLong - 100)
    for (d <- Seq(AsOfDirection.Backward, AsOfDirection.Forward, AsOfDirection.Nearest); inclusive <- Seq(true, false)) {
      val search = new AsOfSearch(keys, d, inclusive)
      for ((l, i) <- (inOrder ++ noOrder ++ inOrder).zipWithIndex) {
        val (from, until) = if (i % 2 == 0) (0, keys.length) else (100, 4000)
        search.locate(from, until, l, hasLower = false, 0L, hasUpper = i % 3 == 0, l + 50, boundsInclusive = true)
        val expected = naive(keys, from, until, d, inclusive, l, None, OptionWhen(i % 3 == 0)(l + 50), boundsInclusive = true)
        assert(search.best == expected, s"$d inclusive=$inclusive row $i l=$l")
      }
    }
  }

  test("a distance is exact exactly when the difference fits the distance's type") {
    assert(DistanceRange.IntRange.exact(Int.MaxValue.toLong, 0L))
    assert(!DistanceRange.IntRange.exact(Int.MaxValue.toLong, -1L))
    assert(DistanceRange.LongRange.exact(Long.MaxValue, 0L))
    assert(!DistanceRange.LongRange.exact(Long.MaxValue, -1L))
    assert(!DistanceRange.LongRange.exact(0L, Long.MinValue))
    assert(DistanceRange.DaysAsMicros.exact(106751991L, 0L))
    assert(!DistanceRange.DaysAsMicros.exact(106751992L, 0L))
  }
}
