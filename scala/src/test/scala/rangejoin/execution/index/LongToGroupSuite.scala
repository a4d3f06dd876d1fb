package rangejoin.execution.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * The long-key group lookup against a map: dense keys (an array), sparse ones (a hash table),
 * extremes whose span overflows a long, and keys just outside the dense range; and each key's
 * segment, looked up in one step, against its group's starts.
 */
class LongToGroupSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private def check(keys: Array[Long], probes: Seq[Long], layout: String): Unit = {
    val lookup = LongToGroup(keys)
    // The layout is what each test is about: a dense test answered by the hash table tests nothing.
    assert(layout == "either" || lookup.getClass.getSimpleName == layout, s"${keys.length} keys")
    val expected = keys.zipWithIndex.toMap
    // Group g holds g + 1 rows, except every third group none (an empty segment).
    val starts = keys.indices.scanLeft(0)((s, g) => s + (if (g % 3 == 2) 0 else g + 1)).toArray
    val segments = lookup.segments(starts)
    for (k <- probes ++ keys) {
      val g = expected.getOrElse(k, -1)
      assert(lookup.get(k) == g, s"key $k among ${keys.take(8).mkString(",")}...")
      val segment = segments.get(k)
      val (from, until) = if (g < 0) (0, 0) else (starts(g), starts(g + 1))
      assert((KeyGroups.from(segment), KeyGroups.until(segment)) == ((from, until)), s"key $k's segment")
    }
  }

  private def around(keys: Array[Long]): Seq[Long] =
    keys.flatMap(k => Seq(k - 1, k + 1)).toSeq ++ Seq(Long.MinValue, Long.MaxValue, 0L, -1L)

  test("dense keys: every key's group, nothing for a key between or outside them") {
    val rnd = new Random(3)
    for (n <- Seq(0, 1, 2, 17, 1000); base <- Seq(0L, -500L, Long.MinValue, Long.MaxValue - 5000)) {
      val keys = rnd.shuffle((0 until 4 * n by 3).map(base + _)).take(n).toArray
      check(keys, around(keys), if (n == 0) "HashedLongToGroup" else "DenseLongToGroup")
    }
  }

  test("keys on a power-of-two stride (bin keys on one level): dense, nothing for a key off the stride") {
    val rnd = new Random(7)
    for (shift <- Seq(1, 6, 20, 62); n <- Seq(1, 2, 50, 3000);
         base <- Seq(0L, -64L * 1000, Long.MinValue, Long.MaxValue - (5000L << math.min(shift, 40)))) {
      val step = 1L << shift
      // Up to 4 positions per key, so some are missing; wrapping past Long.MaxValue is kept.
      val keys = rnd.shuffle((0L until 4L * n).toList).take(n).map(j => base + j * step).distinct.toArray
      val off = keys.flatMap(k => Seq(k + step / 2, k - step / 2, k + 1, k - 1, k + step, k - step))
      // Keys that wrap past Long.MaxValue span most of the longs: hashed, and exact either way.
      val wraps = keys.exists(_ < base)
      check(keys, off.toSeq ++ around(keys), if (wraps) "either" else "DenseLongToGroup")
    }
    // Two keys 2^62 apart, and probes 2^62 further either way, one of them wrapping.
    check(Array(0L, 1L << 62), Seq(Long.MinValue, -(1L << 62), 1L << 61, 3L << 61), "DenseLongToGroup")
    // Bin keys, bin * 64 + level, on level 0 and on level 0 and 1 (off a single stride: hashed).
    val bins = (0L until 2000L by 2).map(_ * 64).toArray
    check(bins, bins.toSeq.flatMap(k => Seq(k + 1, k + 64, k - 64)), "DenseLongToGroup")
    check(bins ++ bins.map(_ + 1), bins.toSeq.flatMap(k => Seq(k + 2, k + 64, k + 65)), "HashedLongToGroup")
  }

  test("sparse keys and spans that overflow a long: hashed, still exact") {
    val rnd = new Random(5)
    for (n <- Seq(1, 3, 100, 5000)) {
      val keys = Array.fill(n)(rnd.nextLong()).distinct
      // One key spans one value: dense. More random longs span far more than 4x their count.
      check(keys, around(keys) ++ Seq.fill(200)(rnd.nextLong()),
        if (keys.length == 1) "DenseLongToGroup" else "HashedLongToGroup")
    }
    check(Array(Long.MinValue, Long.MaxValue), Seq(0L, -1L, Long.MinValue + 1, Long.MaxValue - 1), "HashedLongToGroup")
    check(Array(Long.MinValue, 0L, Long.MaxValue), Seq(1L, -1L), "HashedLongToGroup")
  }

  test("the driver's numbering: a key's first group is kept as the table grows") {
    val map = new HashedLongToGroup(1)
    val keys = (0 until 10000).map(i => (i.toLong * 7919) ^ (i.toLong << 40))
    keys.zipWithIndex.foreach { case (k, g) => assert(map.getOrAdd(k, g) == g) }
    keys.zipWithIndex.foreach { case (k, g) =>
      assert(map.getOrAdd(k, -5) == g)
      assert(map.get(k) == g)
    }
    assert(map.get(-1L) == -1)
  }
}
