package rangejoin.execution.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * The interval tree against its definition: for random keys (duplicates, extremes, every size up
 * to a few complete trees and between), every (p, lower, inclusive) finds exactly the positions
 * i < p whose b passes, each once.
 */
class IntervalTreeSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private def naive(b: Array[Long], p: Int, lower: Long, inclusive: Boolean): Seq[Int] =
    (0 until math.min(p, b.length)).filter(i => b(i) > lower || (inclusive && b(i) == lower))

  private def found(tree: IntervalTree, p: Int, lower: Long, inclusive: Boolean): Seq[Int] = {
    val cursor = tree.cursor()
    cursor.start(p, lower, inclusive)
    Iterator.continually(cursor.next()).takeWhile(_ >= 0).toSeq
  }

  test("finds exactly the positions before p whose second key passes the bound, once each") {
    val rnd = new Random(7)
    val edges = Array(Long.MinValue, Long.MaxValue, 0L, -1L, 1L)
    for (n <- (0 to 17) ++ Seq(31, 32, 33, 63, 64, 100, 257); round <- 0 until 4) {
      val domain = if (round % 2 == 0) 10 else 1000
      val b = Array.fill(n)(if (rnd.nextInt(10) == 0) edges(rnd.nextInt(edges.length)) else rnd.nextInt(domain).toLong)
      val tree = new IntervalTree(b)
      val lowers = edges ++ Seq.fill(8)(rnd.nextInt(domain).toLong) ++ b.take(4)
      for (p <- Seq(0, 1, n / 2, n - 1, n, n + 3).distinct if p >= 0; lower <- lowers; inclusive <- Seq(true, false)) {
        val got = found(tree, p, lower, inclusive)
        assert(got.distinct.size == got.size, s"a position twice: n=$n p=$p lower=$lower $inclusive: $got")
        assert(got.sorted == naive(b, p, lower, inclusive), s"n=$n p=$p lower=$lower inclusive=$inclusive")
      }
    }
  }

  test("within segments (the per-key index): exactly the positions in [from, p), once each") {
    val rnd = new Random(11)
    val edges = Array(Long.MinValue, Long.MaxValue, 0L)
    for (n <- Seq(1, 2, 5, 17, 33, 64, 100, 300); round <- 0 until 3) {
      val b = Array.fill(n)(if (rnd.nextInt(12) == 0) edges(rnd.nextInt(edges.length)) else rnd.nextInt(100).toLong)
      // Segment starts, some empty segments among them; a long interval (a large b) early in one
      // segment must not stop another's backward scan.
      val starts = (0 +: Seq.fill(rnd.nextInt(6))(rnd.nextInt(n + 1))).sorted.toArray
      val bounds = (starts :+ n).distinct
      val tree = new IntervalTree(b, starts)
      for (Array(from, until) <- bounds.sliding(2).filter(_.length == 2); p <- Seq(from, from + 1, until, (from + until) / 2).distinct
          if p <= until; lower <- Seq(Long.MinValue, 0L, 50L, 99L, Long.MaxValue); inclusive <- Seq(true, false)) {
        val cursor = tree.cursor()
        cursor.start(from, p, lower, inclusive)
        val got = Iterator.continually(cursor.next()).takeWhile(_ >= 0).toSeq
        val expected = (from until p).filter(i => b(i) > lower || (inclusive && b(i) == lower))
        assert(got.distinct.size == got.size, s"a position twice: n=$n [$from, $p) $lower $inclusive: $got")
        assert(got.sorted == expected, s"n=$n starts=${starts.mkString(",")} [$from, $p) lower=$lower $inclusive")
      }
    }
  }

  test("a cursor is reusable, and restarting abandons the previous search") {
    val tree = new IntervalTree(Array(5L, 1L, 9L, 3L, 7L))
    val cursor = tree.cursor()
    cursor.start(5, 4L, inclusive = false)
    assert(cursor.next() >= 0)
    cursor.start(2, 0L, inclusive = true)
    assert(Iterator.continually(cursor.next()).takeWhile(_ >= 0).toSeq.sorted == Seq(0, 1))
  }

  test("a million sparse intervals (a point in one or two), and one long interval among them") {
    // Starts 10 apart, length 12: most points are in one or two intervals. Then interval 0 is made
    // to reach past every point, so every prefix maximum passes and the scan cannot stop early.
    val n = 1 << 20
    for (longFirst <- Seq(false, true)) {
      val b = Array.tabulate(n)(i => i * 10L + 12)
      if (longFirst) b(0) = Long.MaxValue
      val tree = new IntervalTree(b)
      val cursor = tree.cursor()
      val start = System.nanoTime()
      var total = 0L
      var expected = 0L
      var q = 0
      while (q < 1000000) {
        val x = (q * 7919L) % (n * 10L)
        cursor.start((x / 10 + 1).toInt, x, inclusive = true) // a = 10 i <= x and b >= x
        while (cursor.next() >= 0) total += 1
        // Only intervals last and last - 1 may contain x (b = 10 i + 12), besides a long interval 0.
        val last = (x / 10).toInt
        var i = last
        while (i >= 0 && i >= last - 1) {
          if (b(i) >= x) expected += 1
          i -= 1
        }
        if (longFirst && last - 1 > 0) expected += 1
        q += 1
      }
      info(s"1,000,000 searches${if (longFirst) " with one long interval" else ""} in " +
        s"${(System.nanoTime() - start) / 1000000} ms, $total found")
      assert(total == expected)
    }
  }

  test("a million short intervals: each point finds exactly the intervals that contain it") {
    // Sorted by a, with b close to a (short intervals): a point's matches are a few positions.
    val n = 1 << 20
    val b = Array.tabulate(n)(i => i.toLong + 50)
    val tree = new IntervalTree(b)
    val cursor = tree.cursor()
    val start = System.nanoTime()
    var total = 0L
    var expected = 0L
    var q = 0
    while (q < 100000) {
      val x = (q * 7919L) % n
      cursor.start((x + 1).toInt, x, inclusive = true) // a <= x and b >= x
      while (cursor.next() >= 0) total += 1
      expected += math.min(x, 50L) + 1 // positions max(0, x - 50) .. x
      q += 1
    }
    assert(total == expected)
    info(s"100,000 searches in ${(System.nanoTime() - start) / 1000000} ms, $total found")
  }
}
