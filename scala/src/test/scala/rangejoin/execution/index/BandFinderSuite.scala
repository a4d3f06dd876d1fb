package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow}
import org.apache.spark.sql.types.{DataType, DoubleType, IntegerType, LongType}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines
import rangejoin.execution.TestSupport._
import rangejoin.condition.RangeOp
import rangejoin.condition.KeyTypes
/**
 * The two band finders against their definition: for random buffers of two keys (NULLs,
 * duplicates, NaN, -0.0, extremes) and random probe pairs, every operator pair finds exactly the
 * buffered rows for which both of catalyst's comparisons are true, each once, in memory and after
 * the buffer's round trip through Java and Kryo serialization.
 *  - BandRunFinder: both bounds on one key, `lo lowerOp k AND hi upperOp k`.
 *  - IntervalFinder: sorted by k, tree over k2, `lo lowerOp k2 AND hi upperOp k`.
 */
class BandFinderSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val pools: Seq[(DataType, Seq[Any])] = Seq(
    IntegerType -> (Seq[Any](Int.MinValue, Int.MaxValue, -1, 0) ++ (0 until 12).map(i => i * 3 - 5)),
    LongType -> Seq[Any](Long.MinValue, Long.MaxValue, -3L, 0L, 1L, 2L, 5L, 8L),
    DoubleType -> Seq[Any](Double.NaN, -0.0d, 0.0d, Double.PositiveInfinity, Double.NegativeInfinity,
      -1.5d, 0.5d, 1.0d, 2.5d, Double.MaxValue))

  private val lowerOps = Seq(RangeOp.Lt, RangeOp.Le)
  private val upperOps = Seq(RangeOp.Gt, RangeOp.Ge)

  private def draw(rnd: Random, pool: Seq[Any]): Any = if (rnd.nextInt(8) == 0) null else pool(rnd.nextInt(pool.size))

  private def candidates(finder: CandidateFinder, probe: InternalRow): Seq[Int] = {
    finder.find(probe)
    Iterator.continually(finder.next()).takeWhile(_ >= 0).toSeq
  }

  for ((dataType, pool) <- pools; interval <- Seq(false, true)) {
    val kind = if (interval) "IntervalFinder" else "BandRunFinder"
    test(s"$kind finds exactly the rows both comparisons accept: $dataType") {
      val rnd = new Random(s"$kind$dataType".hashCode)
      val holds = RangeOp.all.map(op => op -> sparkHolds(op, dataType)).toMap
      val codec = KeyCodec(dataType)
      var matches = 0
      // 4 and 5 rows: the largest window IntervalFinder tests row by row, and the smallest it searches.
      for (n <- Seq(0, 1, 2, 4, 5, 7, 40, 130)) {
        val keys = Seq.fill(n)((draw(rnd, pool), draw(rnd, pool)))
        val rows = unsafeRows(Seq(dataType, dataType, IntegerType),
          keys.zipWithIndex.map { case ((k, k2), id) => Seq(k, k2, id) })
        val k = BoundReference(0, dataType, nullable = true)
        val k2 = BoundReference(1, dataType, nullable = true)
        val built = SortedBuffer.build(rows.toArray, k, if (interval) Some(k2) else None)
        for ((shipping, buffer) <- asShipped(built)) {
          val sorted = codec.sortedKeys(buffer)
          val probes = Seq.fill(25)((draw(rnd, pool), draw(rnd, pool)))
          for (lowerOp <- lowerOps; upperOp <- upperOps; (lo, hi) <- probes) {
            val finder =
              if (interval) new IntervalFinder(sorted, upperOp, lowerOp, KeyTypes.longEncoder(dataType).get,
                buffer.tree, identity, probe = true)
              else new BandRunFinder(sorted, lowerOp, codec.sortedKeys(buffer), upperOp, identity, probe = true)
            val found = candidates(finder, new GenericInternalRow(Array[Any](lo, hi)))
            val expected = (0 until buffer.numRows).filter { i =>
              val row = buffer.row(i)
              val key = valueAt(row, 0, dataType)
              val lowerKey = if (interval) valueAt(row, 1, dataType) else key
              holds(lowerOp)(lo, lowerKey) && holds(upperOp)(hi, key)
            }
            val context = s"$kind, $dataType, $n rows, $shipping: $lo $lowerOp ${if (interval) "k2" else "k"} AND $hi $upperOp k"
            assert(found.distinct.size == found.size, s"$context: a row found twice: $found")
            assert(found.sorted == expected, context)
            if (!interval && found.nonEmpty) assert(found == (found.head to found.last), s"$context: not one run")
            matches += found.size
          }
        }
      }
      assert(matches > 1000, "the probes found almost nothing: the test would pass for an empty finder")
    }
  }

  // Intervals of one length (`k2 = k - 3`): the tree key ascends with the sorted one, and the
  // finder answers with one run, found by a second binary search instead of the tree.
  for ((dataType, pool) <- pools.filter(_._1 != DoubleType)) {
    test(s"IntervalFinder over intervals of one length finds one run, exactly: $dataType") {
      val rnd = new Random(s"ascending$dataType".hashCode)
      val holds = RangeOp.all.map(op => op -> sparkHolds(op, dataType)).toMap
      val codec = KeyCodec(dataType)
      def shifted(v: Any): Any = v match {
        case null => null
        case i: Int => if (i == Int.MinValue) i else i - 3
        case l: Long => if (l == Long.MinValue) l else l - 3
      }
      var matches = 0
      for (n <- Seq(0, 1, 5, 7, 40, 130)) {
        val keys = Seq.fill(n)(draw(rnd, pool)).map(k => (k, shifted(k)))
        val rows = unsafeRows(Seq(dataType, dataType, IntegerType),
          keys.zipWithIndex.map { case ((k, k2), id) => Seq(k, k2, id) })
        val built = SortedBuffer.build(rows.toArray, BoundReference(0, dataType, nullable = true),
          Some(BoundReference(1, dataType, nullable = true)))
        assert(built.tree.ascending, s"$n rows: the shifted key does not ascend")
        val sorted = codec.sortedKeys(built)
        for (lowerOp <- lowerOps; upperOp <- upperOps; _ <- 0 until 25) {
          val (lo, hi) = (draw(rnd, pool), draw(rnd, pool))
          val finder = new IntervalFinder(sorted, upperOp, lowerOp, KeyTypes.longEncoder(dataType).get,
            built.tree, identity, probe = true)
          val found = candidates(finder, new GenericInternalRow(Array[Any](lo, hi)))
          val expected = (0 until built.numRows).filter { i =>
            val row = built.row(i)
            holds(lowerOp)(lo, valueAt(row, 1, dataType)) && holds(upperOp)(hi, valueAt(row, 0, dataType))
          }
          val context = s"$dataType, $n rows: $lo $lowerOp k2 AND $hi $upperOp k"
          assert(found == expected, context)
          assert(finder.isRun && (finder.runFrom until finder.runUntil) == expected, context)
          matches += found.size
        }
      }
      assert(matches > 500, "the probes found almost nothing")
    }
  }
}
