package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.{DataType, IntegerType, StringType}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines
import rangejoin.execution.TestSupport._

/**
 * SortedBuffer.build when the key cannot be evaluated on every row: whichever row raises the error
 * (ANSI overflow, division by zero, malformed cast; first, middle or last row), the payload is the
 * input rows in their original order with `isSorted` false and no keys, so the join can fall back
 * to evaluating the condition pair by pair. And when it can: the key is an expression evaluated
 * per row, empty and all-NULL inputs are sorted buffers with no keys.
 */
class SortedBufferSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val col = BoundReference(0, IntegerType, nullable = true)

  private def rowsOf(dataType: DataType, keys: Seq[Any]): Array[InternalRow] =
    unsafeRows(Seq(dataType, IntegerType), keys.zipWithIndex.map { case (k, id) => Seq(k, id) }).toArray

  private def assertUnsorted(rows: Array[InternalRow], key: Expression, context: String): Unit = {
    val buffer = SortedBuffer.build(rows, key)
    assert(!buffer.isSorted, s"$context: a key failed, yet the buffer claims to be sorted")
    assert(buffer.numRows == rows.length, context)
    for (i <- rows.indices) {
      assert(buffer.row(i) eq rows(i), s"$context: row $i is not the input's row $i")
    }
    assert(buffer.numKeys == 0, context)
  }

  /** Keys in descending order, so that a sorted buffer could not look like the input. */
  private def descendingWithAt(n: Int, position: Int, bad: Any, fine: Int => Any): Seq[Any] =
    (0 until n).map(i => if (i == position) bad else fine(n - i))

  private val failures: Seq[(String, DataType, Expression, Any, Int => Any)] = Seq(
    ("ANSI overflow", IntegerType,
      Add(col, Literal(Int.MaxValue - 100), EvalMode.ANSI), 101, i => i),
    ("ANSI division by zero", IntegerType,
      Remainder(Literal(100), col, EvalMode.ANSI), 0, i => i),
    ("ANSI cast of a malformed string", StringType,
      Cast(BoundReference(0, StringType, nullable = true), IntegerType, Some("UTC"), EvalMode.ANSI),
      org.apache.spark.unsafe.types.UTF8String.fromString("twelve"),
      i => org.apache.spark.unsafe.types.UTF8String.fromString(i.toString)))

  for ((failure, dataType, key, bad, fine) <- failures; n <- Seq(1, 2, 7, 60); position <- Set(0, n / 2, n - 1)) {
    test(s"a key that fails leaves the rows unsorted, in order: $failure at row $position of $n") {
      assertUnsorted(rowsOf(dataType, descendingWithAt(n, position, bad, fine)), key, failure)
      // Control: without the bad row the same key evaluates, so the failure above is that row's.
      val control = SortedBuffer.build(rowsOf(dataType, (0 until n).map(i => fine(n - i))), key)
      assert(control.isSorted && control.numKeys == n, s"$failure: control")
    }
  }

  test("a failing key among NULL keys still leaves the rows unsorted") {
    val keys = Seq[Any](null, 5, null, 0, 3, null)
    assertUnsorted(rowsOf(IntegerType, keys), Remainder(Literal(100), col, EvalMode.ANSI), "division by zero")
  }

  test("the key is an expression evaluated per row: sorted by it, rows unchanged") {
    val rnd = new Random(7)
    val keys = Seq.fill(50)(if (rnd.nextInt(5) == 0) null else rnd.nextInt(20) - 10)
    val rows = rowsOf(IntegerType, keys)
    val buffer = SortedBuffer.build(rows, UnaryMinus(col))
    assert(buffer.isSorted)
    val sortedKeys = (0 until buffer.numRows).map(i => valueAt(buffer.row(i), 0, IntegerType))
    val nonNull = keys.filter(_ != null).map(_.asInstanceOf[Int])
    assert(sortedKeys == nonNull.sorted.reverse ++ Seq.fill(keys.count(_ == null))(null))
    assert((0 until buffer.numRows).map(i => buffer.row(i).getInt(1)).sorted == keys.indices)
  }

  test("a one-column integral equality key: its groups lie in ascending key order, each sorted") {
    // (group key, range key, id): group keys in no order, negative and extreme ones, NULLs.
    val rnd = new Random(5)
    val groupKeys = Seq(7L, -3L, Long.MaxValue, 0L, Long.MinValue, 42L, -3L)
    val input = (0 until 200).map { id =>
      val g = if (id % 23 == 0) null else groupKeys(rnd.nextInt(groupKeys.size))
      Seq(g, rnd.nextInt(50), id)
    }
    val types = Seq(org.apache.spark.sql.types.LongType, IntegerType, IntegerType)
    val rows = unsafeRows(types, input).toArray
    val buffer = SortedBuffer.build(rows, BoundReference(1, IntegerType, nullable = true),
      groupKeys = Seq(BoundReference(0, org.apache.spark.sql.types.LongType, nullable = true)))
    val keyed = (0 until buffer.numKeys).map(i => (buffer.row(i).getLong(0), buffer.row(i).getInt(1)))
    assert(keyed == keyed.sorted, "groups by ascending key, each by its range key")
    assert(keyed.size == input.count(_.head != null))
    val groups = buffer.groups.get
    assert(groups.numGroups == groupKeys.distinct.size)
    val lookup = KeyGroups.lookup(groups, Seq(BoundReference(0, org.apache.spark.sql.types.LongType, nullable = true)))
    for (k <- groupKeys.distinct) {
      val segment = lookup(new GenericInternalRow(Array[Any](k, 0, 0)))
      val (from, until) = (KeyGroups.from(segment), KeyGroups.until(segment))
      assert(from < until && (from until until).forall(i => buffer.row(i).getLong(0) == k), s"key $k")
    }
  }

  test("an empty input is a sorted buffer with no rows and no keys") {
    val buffer = SortedBuffer.build(Array.empty[InternalRow], col)
    assert(buffer.isSorted && buffer.numRows == 0 && buffer.numKeys == 0)
  }

  test("all-NULL keys: every row is kept, none is keyed") {
    val rows = rowsOf(IntegerType, Seq(null, null, null))
    val buffer = SortedBuffer.build(rows, col)
    assert(buffer.isSorted && buffer.numRows == 3 && buffer.numKeys == 0)
    assert((0 until 3).map(i => buffer.row(i).getInt(1)).sorted == Seq(0, 1, 2))
  }
}
