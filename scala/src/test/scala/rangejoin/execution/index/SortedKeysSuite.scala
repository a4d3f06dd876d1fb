package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, IntegerType}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.execution.TestSupport._
import rangejoin.condition.RangeOp
import rangejoin.execution.{KeyCase, KeyCases}
import rangejoin.differential.Tier
/**
 * The search every range join reduces to, for every key type rangejoin supports: for random
 * buffers (NULLs, duplicates, special values) and probes (existing keys, values beyond every key,
 * NULL), the run SortedRunFinder returns for `probe op buffered` is exactly the set of buffered
 * rows for which catalyst's own comparison evaluates to true. The buffer is also checked as it
 * arrives in a task, after a round trip through Java and Kryo serialization, and as a layout:
 * every input row exactly once, NULL keys after the sorted keys. The largest buffers are probed
 * in no order for hundreds of rows, so both forms of the long keys' search answer.
 */
class SortedKeysSuite extends AnyFunSuite {

  private val bufferSizes = Seq(0, 1, 2, 5, 24, 120)
  private val nullShare = 0.15
  private val edgeShare = 0.15

  // The costliest unit loop (about 4 s a type): the smoke lines share its types between them.
  for (keyCase <- Tier.acrossSmokeLines(KeyCases.all)) {
    test(s"runs are exactly the rows Spark's comparison accepts: ${keyCase.name}") {
      val rnd = new Random(keyCase.name.hashCode)
      for (n <- bufferSizes; withEdges <- Seq(false, true)) {
        val keys = Seq.fill(n)(drawKey(keyCase, rnd, withEdges))
        val rows = unsafeRows(Seq(keyCase.dataType, IntegerType), keys.zipWithIndex.map { case (k, id) => Seq(k, id) })
        val payload = SortedBuffer.build(rows.toArray[InternalRow], BoundReference(0, keyCase.dataType, nullable = true))
        // The largest buffers are probed in no order long enough for the search to switch to
        // its branch-free form (LongSearch, per block of rows).
        val probes = probesFor(keyCase, keys, rnd) match {
          case some if n == bufferSizes.max => rnd.shuffle(Seq.fill(3 * LongSearch.Block / some.size + 1)(some).flatten)
          case some => some
        }
        for ((shipping, shipped) <- asShipped(payload)) {
          val context = s"${keyCase.name}, $n rows${if (withEdges) " with edge values" else ""}, $shipping"
          checkLayout(rows, shipped, keyCase.dataType, context)
          checkRuns(shipped, keyCase.dataType, probes, context)
        }
      }
    }
  }

  test("a NULL probe matches nothing, even where every key would") {
    val keys = Seq[Any](1, 2, null, 3)
    val rows = unsafeRows(Seq(IntegerType, IntegerType), keys.zipWithIndex.map { case (k, id) => Seq(k, id) })
    val buffer = SortedBuffer.build(rows.toArray[InternalRow], BoundReference(0, IntegerType, nullable = true))
    for (op <- RangeOp.all) {
      val finder = finderFor(buffer, IntegerType, op)
      finder.find(new GenericInternalRow(Array[Any](null)))
      assert(finder.from >= finder.until, s"NULL $op b gave the run [${finder.from}, ${finder.until})")
    }
  }

  private def drawKey(keyCase: KeyCase, rnd: Random, withEdges: Boolean): Any = {
    val dice = rnd.nextDouble()
    if (dice < nullShare) null
    else if (withEdges && keyCase.edges.nonEmpty && dice < nullShare + edgeShare) {
      keyCase.edges(rnd.nextInt(keyCase.edges.length))
    } else keyCase.draw(rnd)
  }

  /** Keys of the buffer itself (so equal values), the type's specials, values beyond, NULL. */
  private def probesFor(keyCase: KeyCase, keys: Seq[Any], rnd: Random): Seq[Any] =
    rnd.shuffle(keys.filter(_ != null)).take(20) ++ keyCase.edges ++ keyCase.outside ++
      Seq.fill(10)(keyCase.draw(rnd)) :+ null

  private def checkLayout(rows: Seq[InternalRow], buffer: SortedBuffer, dataType: DataType, context: String): Unit = {
    assert(buffer.isSorted, context)
    assert(buffer.numRows == rows.length, context)
    val ids = (0 until buffer.numRows).map(i => buffer.row(i).getInt(1))
    assert(ids.sorted == rows.indices, s"$context: each input row must appear exactly once, got ids $ids")
    for (i <- 0 until buffer.numRows) {
      if (buffer.row(i) != rows(ids(i))) fail(s"$context: row $i differs from input row ${ids(i)}")
    }
    val keyed = buffer.numKeys
    assert(keyed == rows.count(!_.isNullAt(0)), context)
    assert((0 until keyed).forall(i => !buffer.row(i).isNullAt(0)), s"$context: a NULL key among the sorted keys")
    assert((keyed until buffer.numRows).forall(i => buffer.row(i).isNullAt(0)), s"$context: a key after the sorted keys")
    val atOrBelow = sparkHolds(RangeOp.Le, dataType)
    for (i <- 1 until keyed) {
      val (a, b) = (valueAt(buffer.row(i - 1), 0, dataType), valueAt(buffer.row(i), 0, dataType))
      if (!atOrBelow(a, b)) fail(s"$context: rows ${i - 1} and $i are out of order: $a, $b")
    }
  }

  private def checkRuns(buffer: SortedBuffer, dataType: DataType, probes: Seq[Any], context: String): Unit = {
    val bufferedKeys = (0 until buffer.numRows).map(i => valueAt(buffer.row(i), 0, dataType))
    val keyed = buffer.numKeys
    for (op <- RangeOp.all) {
      val accepted = acceptedBy(sparkHolds(op, dataType), bufferedKeys)
      val finder = finderFor(buffer, dataType, op)
      for (probe <- probes) {
        finder.find(new GenericInternalRow(Array[Any](probe)))
        val run = (finder.from until finder.until).toSet
        val expected = accepted(probe).toSet
        def show(v: Any) = v match {
          case bytes: Array[Byte] => bytes.mkString("[", ",", "]")
          case other => String.valueOf(other)
        }
        if (run != expected) {
          fail(s"$context: probe ${show(probe)} $op b found rows [${finder.from}, ${finder.until}), " +
            s"Spark accepts ${expected.toSeq.sorted} of keys ${bufferedKeys.map(show)}")
        }
        if (finder.until > keyed && finder.from < finder.until) fail(s"$context: a run reaches a NULL key")
      }
      checkFixedEndFirst(probes, accepted, finderFor(buffer, dataType, op), s"$context, $op")
    }
  }

  // The checks below run hundreds of thousands of times a type: each builds its message only when
  // it fails (ScalaTest's assert builds its clue first).

  /**
   * The buffered rows Spark's comparison accepts for a probe, evaluated once per probe object:
   * the largest buffers are probed with the same few probes hundreds of times. By identity, not
   * equality, so that -0.0 and 0.0 (equal in Scala) or two NaNs are each evaluated themselves.
   */
  private def acceptedBy(holds: (Any, Any) => Boolean, bufferedKeys: IndexedSeq[Any]): Any => IndexedSeq[Int] = {
    val memo = new java.util.IdentityHashMap[Any, IndexedSeq[Int]]()
    probe => memo.computeIfAbsent(probe, _ => bufferedKeys.indices.filter(i => holds(probe, bufferedKeys(i))))
  }

  /**
   * The existence joins' finder finds the same candidates as the run, each once, in its own
   * order: row after row, some rows left after a few candidates (as a passing one leaves them),
   * over enough rows that most need the search after their tries, so it also searches first.
   */
  private def checkFixedEndFirst(
      probes: Seq[Any],
      accepted: Any => IndexedSeq[Int],
      run: SortedRunFinder,
      context: String): Unit = {
    val finder = new FixedEndFirstFinder(run)
    val rnd = new Random(context.hashCode)
    val rows = Seq.fill(2)(probes).flatten ++ Seq.fill(2 * FixedEndFirstFinder.Block / probes.size + 1)(probes).flatten
    for ((probe, r) <- rows.zipWithIndex) {
      finder.find(new GenericInternalRow(Array[Any](probe)))
      val expected = accepted(probe)
      val leaveAfter = if (r % 3 == 0) rnd.nextInt(FixedEndFirstFinder.Tries + 2) else Int.MaxValue
      val found = Iterator.continually(finder.next()).takeWhile(_ >= 0).take(leaveAfter).toSeq
      if (leaveAfter == Int.MaxValue) {
        if (found.sorted != expected) fail(s"$context: row $r, probe $probe found $found, Spark accepts $expected")
      } else if (found.distinct != found || !found.forall(expected.contains)) {
        fail(s"$context: row $r, probe $probe found $found (left after $leaveAfter), Spark accepts $expected")
      }
    }
  }

  private def finderFor(buffer: SortedBuffer, dataType: DataType, op: RangeOp): SortedRunFinder = {
    val keyOf = UnsafeProjection.create(Seq(BoundReference(0, dataType, nullable = true)))
    new SortedRunFinder(KeyCodec(dataType).sortedKeys(buffer), op, keyOf, 0, probe = true)
  }
}
