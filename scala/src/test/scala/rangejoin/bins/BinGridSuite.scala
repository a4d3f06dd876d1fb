package rangejoin.bins

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Literal, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * The bin grid against its definition, on random and extreme intervals: floor division for
 * negatives and at the long range's ends, the span bound, the level read from a hinted base and
 * the one the data grid derives from span exponents (they must agree, or a point would miss the
 * level its interval is on), and the pairing: a point and an interval holding it share exactly one
 * (level, bin).
 */
class BinGridSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val rnd = new Random(7)
  private val extremes = Seq(Long.MinValue, Long.MinValue + 1, -1L, 0L, 1L, Long.MaxValue - 1, Long.MaxValue)

  private def randomLong(): Long = rnd.nextInt(6) match {
    case 0 => extremes(rnd.nextInt(extremes.size))
    case 1 => rnd.nextLong()
    case 2 => rnd.nextInt(2000) - 1000L
    case _ => (rnd.nextInt(2000) - 1000L) << rnd.nextInt(50)
  }

  private def randomInterval(): (Long, Long) = {
    val (a, b) = (randomLong(), if (rnd.nextBoolean()) randomLong() else 0L)
    val lo = math.min(a, b)
    val hi = if (rnd.nextBoolean()) math.max(a, b) else {
      val len = rnd.nextInt(1000).toLong << rnd.nextInt(40)
      if (lo > Long.MaxValue - len) Long.MaxValue else lo + len
    }
    (lo, hi)
  }

  test("bin is floor division, also for negatives and the ends of the range") {
    assert(BinGrid.bin(-1, 10) == -1 && BinGrid.bin(-10, 10) == -1 && BinGrid.bin(-11, 10) == -2)
    assert(BinGrid.bin(9, 10) == 0 && BinGrid.bin(Long.MinValue, 1) == Long.MinValue)
    assert(BinGrid.bin(Long.MaxValue, Long.MaxValue) == 1 && BinGrid.bin(Long.MinValue, Long.MaxValue) == -2)
    // Any positive size, and powers of two (a shift) up to 2^62.
    def anySize() = if (rnd.nextBoolean()) 1 + (rnd.nextLong() >>> rnd.nextInt(63) + 1) else 1L << rnd.nextInt(63)
    for (_ <- 0 until 20000; x = randomLong(); size <- Seq(anySize(), anySize())) {
      val expected = BigInt(x) / BigInt(size) - (if (x < 0 && BigInt(x) % BigInt(size) != 0) 1 else 0)
      assert(BigInt(BinGrid.bin(x, size)) == expected, s"$x / $size")
    }
  }

  test("an interval spans at most MaxBins bins on its level, TopLevelBins on the top one") {
    for (_ <- 0 until 20000; (lo, hi) = randomInterval(); base <- Seq(1L, 3L, 1L << rnd.nextInt(61), Long.MaxValue)) {
      val level = BinGrid.levelOf(lo, hi, base)
      val size = BinGrid.sizeAt(base, level)
      val bins = BigInt(BinGrid.bin(hi, size)) - BigInt(BinGrid.bin(lo, size)) + 1
      assert(bins >= 1 && (bins <= BinGrid.MaxBins || BinGrid.isTop(size) && bins <= BinGrid.TopLevelBins),
        s"[$lo, $hi] base $base: level $level, $bins bins")
      if (level > 0) assert(!BinGrid.spansAtMost(lo, hi, BinGrid.sizeAt(base, level - 1), BinGrid.MaxBins))
    }
  }

  test("the data grid's levels, from span exponents, are the levels intervals are put on") {
    for (_ <- 0 until 20000; (lo, hi) = randomInterval(); p <- Seq(0, 1, 2, rnd.nextInt(61), 58, 59, 60)) {
      assert(BinGrid.levelOf(lo, hi, 1L << p) == BinGrid.levelOfExponent(BinGrid.exponentOf(lo, hi), p),
        s"[$lo, $hi] base 2^$p")
    }
  }

  test("a point and an interval holding it share exactly one (level, bin)") {
    for (_ <- 0 until 5000; (lo, hi) = randomInterval(); base <- Seq(1L, 7L, 1L << rnd.nextInt(40))) {
      val level = BinGrid.levelOf(lo, hi, base)
      val size = BinGrid.sizeAt(base, level)
      val bins = BinGrid.bin(lo, size) to BinGrid.bin(hi, size)
      val offset = (BigInt(hi) - BigInt(lo)) * BigInt(rnd.nextInt(1001)) / 1000
      val point = (BigInt(lo) + offset).toLong
      // The point's bins: one per level up to the top; only the interval's level can meet it.
      val shared = (0 to 21).filter(l => BinGrid.sizeAt(base, l) > 0).count { l =>
        l == level && bins.contains(BinGrid.bin(point, BinGrid.sizeAt(base, l)))
      }
      assert(shared == 1, s"[$lo, $hi] point $point base $base")
    }
  }

  // One long key per (level, bin) wraps, so two bins of one level 2^58 apart share a key. A pair
  // that matches has its bins at most TopLevelBins apart, so it still meets on one key only, and
  // a pair meeting on a key that is not its (level, bin) fails the condition the join keeps.
  test("a bin key is unique per level, and a matching pair's bins never share another's key") {
    for (_ <- 0 until 20000; level <- Seq(0, 1, rnd.nextInt(21)); bin = randomLong()) {
      val key = BinKeys.key(level, bin)
      assert((key & 63) == level, s"level $level bin $bin")
      val other = bin + (1L << 58) * (1 + rnd.nextInt(30))
      assert(BinKeys.key(level, other) == key) // the collision the condition settles
      for (d <- 1 to 2 * BinGrid.TopLevelBins) assert(BinKeys.key(level, bin + d) != key, s"$bin + $d")
      assert(BinKeys.key((level + 1 + rnd.nextInt(62)) % 64, bin) != key)
    }
    // A point and an interval on extreme keys meet on exactly one key: the shared (level, bin)'s.
    for (_ <- 0 until 5000; (lo, hi) = randomInterval(); base <- Seq(1L, 1L << rnd.nextInt(40))) {
      val level = BinGrid.levelOf(lo, hi, base)
      val size = BinGrid.sizeAt(base, level)
      val keys = (BinGrid.bin(lo, size) to BinGrid.bin(hi, size)).map(BinKeys.key(level, _)).toSet
      val point = if (rnd.nextBoolean()) lo else hi
      val pointKeys = (0 to 21).filter(l => BinGrid.sizeAt(base, l) > 0)
        .map(l => BinKeys.key(l, BinGrid.bin(point, BinGrid.sizeAt(base, l))))
      assert(pointKeys.count(keys.contains) == 1, s"[$lo, $hi] point $point base $base")
    }
  }

  /** The copies of `[lo, hi]` in an overlap join: (level, bin) -> (own level, first bin). */
  private def overlapCopies(lo: Long, hi: Long, base: Long, otherLevels: Long): Map[(Int, Long), (Boolean, Boolean)] = {
    val own = BinGrid.levelOf(lo, hi, base)
    BinGrid.overlapLevels(own, otherLevels, base).toSeq.flatMap { level =>
      val size = BinGrid.sizeAt(base, level)
      val first = BinGrid.bin(lo, size)
      val count = (BigInt(BinGrid.bin(hi, size)) - BigInt(first) + 1).toInt
      assert(count >= 1 && count <= (if (level == own) BinGrid.TopLevelBins else 2), s"[$lo, $hi] level $level")
      (0 until count).map(i => (level, first + i) -> (level == own, i == 0))
    }.toMap
  }

  test("two intersecting intervals share exactly one (level, bin) where one is on its level and one at its first bin") {
    for (_ <- 0 until 20000; base <- Seq(1L, 5L, 1L << rnd.nextInt(40))) {
      val (aLo, aHi) = randomInterval()
      // b starts inside a most of the time, so that most pairs intersect.
      val (bLo, bHi) = if (rnd.nextInt(4) == 0) randomInterval() else {
        val start = (BigInt(aLo) + (BigInt(aHi) - BigInt(aLo)) * BigInt(rnd.nextInt(1001)) / 1000).toLong
        val (lo, hi) = randomInterval()
        (math.min(start, lo), math.max(start, if (rnd.nextBoolean()) hi else start))
      }
      // Each side's levels: its interval's, and others of intervals the test does not draw.
      def levels(lo: Long, hi: Long) = (1L << BinGrid.levelOf(lo, hi, base)) | (rnd.nextLong() & rnd.nextLong())
      val (a, b) = (overlapCopies(aLo, aHi, base, levels(bLo, bHi)), overlapCopies(bLo, bHi, base, levels(aLo, aHi)))
      val shared = a.keySet.intersect(b.keySet).count { key =>
        val ((aOwn, aFirst), (bOwn, bFirst)) = (a(key), b(key))
        (aOwn || bOwn) && (aFirst || bFirst)
      }
      val intersect = math.max(aLo, bLo) <= math.min(aHi, bHi)
      if (intersect) assert(shared == 1, s"[$aLo, $aHi] and [$bLo, $bHi] base $base")
    }
  }

  test("the overlap bins expression gives each copy once, read in place, through a projection or copied") {
    val project = UnsafeProjection.create(BinKeys.OverlapCopyType)
    for (_ <- 0 until 2000; base <- Seq(1L, 5L, 1L << rnd.nextInt(40))) {
      val (lo, hi) = randomInterval()
      val (leftLevels, rightLevels) = (rnd.nextLong() & rnd.nextLong(), rnd.nextLong() & rnd.nextLong())
      val isLeft = rnd.nextBoolean()
      val grid = Literal.create(BinKeys.overlapGrid(base, leftLevels, rightLevels), BinKeys.OverlapGridType)
      val copies = RangeJoinOverlapBins(Literal(lo), Literal(hi), grid, isLeft).eval(null).asInstanceOf[ArrayData]
      // Each side's copies go to the levels above its own that hold the other side's intervals.
      val expected = overlapCopies(lo, hi, base, if (isLeft) rightLevels else leftLevels).toSeq
        .map { case ((level, bin), (own, first)) => (BinKeys.key(level, bin), own, first) }.sorted
      val rows = (0 until copies.numElements()).map(copies.getStruct(_, 3))
      def fields(r: InternalRow) = (r.getLong(0), r.getBoolean(1), r.getBoolean(2))
      val context = s"[$lo, $hi] base $base, levels $leftLevels / $rightLevels, left: $isLeft"
      assert(rows.map(fields).sorted == expected, context)
      assert(rows.map(r => fields(project(r))) == rows.map(fields), context)
      assert(rows.map(r => fields(r.copy())) == rows.map(fields), context)
    }
  }

  test("an overlap join's bins widen by the sides' counts, lengths and key range, within bounds") {
    // W12's overlap: 2M and 200K intervals of 50 over 2 x 10^7: B = sqrt(64 * 5500 + 2500) ~ 595.
    assert(BinGrid.overlapBaseExponent(7, 2000000, 200000, 50.0 * 2000000, 50.0 * 200000, 2e7) == 10)
    // Dense keys: no wider than the lengths ask.
    assert(BinGrid.overlapBaseExponent(7, 2000000, 200000, 50.0 * 2000000, 50.0 * 200000, 1e4) == 7)
    // Sparse keys: at most MaxWiden more.
    assert(BinGrid.overlapBaseExponent(7, 10, 10, 500.0, 500.0, 1e15) == 7 + BinGrid.MaxWiden)
    assert(BinGrid.overlapBaseExponent(59, 10, 10, 4e19, 4e19, 1.8e19) == 60) // never past the top
    // Nothing to go by: the length-based exponent.
    for ((nA, nB, domain) <- Seq((0L, 5L, 1e6), (5L, 0L, 1e6), (5L, 5L, 0.0), (5L, 5L, Double.NaN)))
      assert(BinGrid.overlapBaseExponent(3, nA, nB, 10.0, 10.0, domain) == 3)
    assert(BinGrid.overlapBaseExponent(3, 5, 5, Double.NaN, 10.0, 1e6) == 3)
    for (_ <- 0 until 10000) {
      val p = rnd.nextInt(61)
      val q = BinGrid.overlapBaseExponent(p, 1L + rnd.nextInt(1 << 20), 1L + rnd.nextInt(1 << 20),
        rnd.nextDouble() * 1e18, rnd.nextDouble() * 1e18, rnd.nextDouble() * 1.8e19)
      assert(q >= p && q <= math.max(p, math.min(p + BinGrid.MaxWiden, 60)), s"p $p: $q")
    }
  }
}
