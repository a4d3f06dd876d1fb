package rangejoin.execution.broadcast

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.types.{DataType, LongType}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.TestShims

/** The sorted broadcast's limits fail with Spark's own errors, before the rows are sorted. */
class BroadcastLimitsSuite extends AnyFunSuite {

  private def rows(n: Int): Seq[InternalRow] = {
    val toUnsafe = UnsafeProjection.create(Array[DataType](LongType))
    (0 until n).map(i => toUnsafe(InternalRow(i.toLong)).copy())
  }

  private def condition(body: => Any): String = intercept[Throwable](body) match {
    case t: SparkThrowable => TestShims.condition(t)
    case other => fail(s"not Spark's error: $other")
  }

  test("within the limits, every row is kept, and its bytes counted") {
    val collected = BroadcastLimits.collect(5, rows(5).iterator, maxBytes = 1000, maxRows = 6)
    assert(collected.rows.length == 5)
    assert(collected.bytes == rows(5).map(_.asInstanceOf[org.apache.spark.sql.catalyst.expressions.UnsafeRow].getSizeInBytes).sum)
  }

  test("too many rows fail before any row is read, as Spark's broadcast does") {
    val untouched = new Iterator[InternalRow] {
      def hasNext: Boolean = throw new AssertionError("a row was read")
      def next(): InternalRow = throw new AssertionError("a row was read")
    }
    val error = condition(BroadcastLimits.collect(6, untouched, maxBytes = 1000, maxRows = 6))
    assert(error == "_LEGACY_ERROR_TEMP_2248" || error.contains("BROADCAST"), error)
  }

  test("too many bytes fail as soon as the limit is passed") {
    var read = 0
    val counting = rows(100).iterator.map { r => read += 1; r }
    val error = condition(BroadcastLimits.collect(100, counting, maxBytes = 160))
    assert(error.nonEmpty)
    assert(read < 100, "every row was read first")
  }
}
