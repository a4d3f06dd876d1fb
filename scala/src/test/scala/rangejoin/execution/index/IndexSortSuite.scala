package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * IndexSort sorts row indices exactly as a stable reference sort (Scala's sortBy) does, for sizes
 * on both sides of its insertion-sort cutoff and its merge steps, on inputs with many duplicates,
 * already sorted, reversed and random; exact equality with a stable sort proves stability.
 */
class IndexSortSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  /** A key column over plain ints; IndexSort only compares. */
  private final class IntKeys(keys: Array[Int]) extends KeyColumn {
    var comparisons = 0L
    def set(i: Int, keyRow: InternalRow): Unit = throw new UnsupportedOperationException
    def isNull(i: Int): Boolean = false
    def compare(i: Int, j: Int): Int = {
      comparisons += 1
      Integer.compare(keys(i), keys(j))
    }
    def stored(order: Array[Int]): StoredKeys = throw new UnsupportedOperationException
  }

  private val sizes = Seq(0, 1, 2, 3, 7, 22, 23, 24, 25, 26, 47, 48, 49, 50, 97, 100, 1000, 4099)

  /** Keys for n rows, by shape. */
  private val shapes: Seq[(String, (Int, Random) => Array[Int])] = Seq(
    "random" -> ((n, rnd) => Array.fill(n)(rnd.nextInt())),
    "few distinct" -> ((n, rnd) => Array.fill(n)(rnd.nextInt(4))),
    "all equal" -> ((n, _) => Array.fill(n)(7)),
    "ascending" -> ((n, _) => Array.tabulate(n)(identity)),
    "descending" -> ((n, _) => Array.tabulate(n)(i => n - i)),
    "sorted runs" -> ((n, rnd) => Array.tabulate(n)(i => i % 30 + rnd.nextInt(2))),
    "organ pipe" -> ((n, _) => Array.tabulate(n)(i => math.min(i, n - i))))

  private def checkSorts(keys: Array[Int], indices: Array[Int], context: String): Unit = {
    val expected = indices.sortBy(keys(_)) // stable
    val actual = indices.clone()
    IndexSort.sort(actual, new IntKeys(keys))
    assert(actual.sameElements(expected),
      s"$context: sorted ${actual.take(40).mkString(",")}... expected ${expected.take(40).mkString(",")}...")
  }

  for ((shape, keysOf) <- shapes) {
    test(s"sorts like a stable reference sort: $shape") {
      val rnd = new Random(shape.hashCode)
      for (n <- sizes) {
        val keys = keysOf(n, rnd)
        checkSorts(keys, Array.tabulate(n)(identity), s"$shape, n=$n, indices in order")
        // SortedBuffer sorts the keyed rows' indices, which need not start in key order or be dense.
        checkSorts(keys, rnd.shuffle(Array.tabulate(n)(identity).toSeq).toArray, s"$shape, n=$n, shuffled indices")
        checkSorts(keys, Array.tabulate(n)(identity).filter(_ => rnd.nextBoolean()), s"$shape, n=$n, some indices")
      }
    }
  }

  test("segments (a per-key index's groups) sort each on its own, stably, nothing crossing a start") {
    val rnd = new Random(9)
    for (n <- Seq(0, 1, 5, 30, 100, 3000); (shape, keysOf) <- shapes) {
      val keys = keysOf(n, rnd)
      val indices = rnd.shuffle(Array.tabulate(n)(identity).toSeq).toArray
      // Empty segments, one-row segments and long ones among them.
      val starts = (0 +: Seq.fill(rnd.nextInt(8))(rnd.nextInt(n + 1)) :+ n).sorted.toArray
      val expected = starts.sliding(2).filter(_.length == 2).flatMap { case Array(from, until) =>
        indices.slice(from, until).sortBy(keys(_))
      }.toArray
      val actual = indices.clone()
      IndexSort.sortSegments(actual, starts, new IntKeys(keys))
      assert(actual.sameElements(expected), s"$shape, n=$n, starts ${starts.mkString(",")}")
    }
  }

  test("sorts a large input with duplicates") {
    val rnd = new Random(42)
    val n = 200000
    val keys = Array.fill(n)(rnd.nextInt(1000))
    checkSorts(keys, rnd.shuffle(Array.tabulate(n)(identity).toSeq).toArray, s"n=$n")
  }

  test("an input already in order costs one comparison per element (the merge is skipped)") {
    val n = 10000
    val keys = new IntKeys(Array.tabulate(n)(identity))
    IndexSort.sort(Array.tabulate(n)(identity), keys)
    // Insertion sort compares each element once with its sorted predecessor; merges compare once.
    assert(keys.comparisons < 2L * n, s"${keys.comparisons} comparisons for $n sorted elements")
  }

  // The radix sort of long keys: the same order as the stable reference, for every size from
  // none up (n < 2 needs no pass), signed keys (the sign bit flipped), keys that differ only in their high
  // or low bytes (passes skipped or not), and indices not in order or not dense.
  private val longShapes: Seq[(String, (Int, Random) => Array[Long])] = Seq(
    "random" -> ((n, rnd) => Array.fill(n)(rnd.nextLong())),
    "extremes and zero" -> ((n, rnd) =>
      Array.fill(n)(Seq(Long.MinValue, Long.MinValue + 1, -1L, 0L, 1L, Long.MaxValue - 1, Long.MaxValue)(rnd.nextInt(7)))),
    "narrow, negative" -> ((n, rnd) => Array.fill(n)(-1000L + rnd.nextInt(50))),
    "high bytes only" -> ((n, rnd) => Array.fill(n)(rnd.nextInt(5).toLong << 56)),
    "one byte in the middle" -> ((n, rnd) => Array.fill(n)(0x1234000000000000L | (rnd.nextInt(256).toLong << 24))),
    "all equal" -> ((n, _) => Array.fill(n)(42L)),
    "descending" -> ((n, _) => Array.tabulate(n)(i => (n - i).toLong * 1000003L)),
    "doubles as sortable longs" -> ((n, rnd) => Array.fill(n)(rangejoin.condition.KeyTypes.sortableDouble(
      Seq(Double.NaN, -0.0, 0.0, Double.NegativeInfinity, Double.PositiveInfinity, -1.5, 2.5, Double.MinPositiveValue)(rnd.nextInt(8))))))

  for ((shape, keysOf) <- longShapes) {
    test(s"the radix sort of long keys sorts like a stable reference sort: $shape") {
      val rnd = new Random(shape.hashCode)
      for (n <- sizes ++ Seq(255, 256, 257, 3000, 70000)) {
        val keys = keysOf(n, rnd)
        for (indices <- Seq(Array.tabulate(n)(identity),
                            rnd.shuffle(Array.tabulate(n)(identity).toSeq).toArray,
                            Array.tabulate(n)(identity).filter(_ => rnd.nextBoolean()))) {
          val expected = indices.sortBy(keys(_)) // stable, signed Long order
          val actual = indices.clone()
          IndexSort.sortLongs(actual, keys)
          assert(actual.sameElements(expected), s"$shape, n=$n: ${actual.take(20).mkString(",")}... " +
            s"expected ${expected.take(20).mkString(",")}...")
        }
      }
    }
  }

  test("one LongSort reused over batches of every shape and size sorts each like a fresh one") {
    val rnd = new Random(17)
    val sorter = new IndexSort.LongSort(3000)
    for (round <- 0 until 40) {
      val (shape, keysOf) = longShapes(rnd.nextInt(longShapes.size))
      val n = Seq(0, 1, 2, 255, 3000, rnd.nextInt(3000))(rnd.nextInt(6))
      val keys = keysOf(n, rnd)
      // A batch fills the front of a longer array; what lies past n must stay as it was.
      val indices = rnd.shuffle(Array.tabulate(n)(identity).toSeq).toArray ++ Array(-7, -8)
      val expected = indices.take(n).sortBy(keys(_)) ++ Array(-7, -8)
      sorter.sort(indices, n, keys)
      assert(indices.sameElements(expected), s"round $round, $shape, n=$n")
    }
  }
}
