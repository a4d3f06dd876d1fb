package rangejoin.execution.broadcast

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.condition.Extreme

/**
 * The extreme row of a side: integer-valued columns are read in place, every other key through
 * Spark's ordering; both must pick the same row (the first of equal extremes), NULLs never.
 */
class ExtremeRowsSuite extends AnyFunSuite {

  private val random = new Random(11)

  /** Rows of (id, key), the key of `dataType` from `values`, NULL one time in five. */
  private def rows(dataType: DataType, n: Int, values: Int => Any): Seq[InternalRow] = {
    val toUnsafe = UnsafeProjection.create(Array[DataType](LongType, dataType))
    (0 until n).map { i =>
      val key = if (random.nextInt(5) == 0) null else values(random.nextInt(7) - 3)
      toUnsafe(InternalRow(i.toLong, key)).copy()
    }
  }

  private val integral: Seq[(DataType, Int => Any)] = Seq(
    LongType -> (i => Long.MaxValue / 4 * i), IntegerType -> (i => Int.MaxValue / 4 * i),
    ShortType -> (i => (i * 1000).toShort), ByteType -> (i => (i * 40).toByte),
    DateType -> (i => i * 9000), TimestampType -> (i => i * 86400000000L), TimestampNTZType -> (i => i.toLong),
    DayTimeIntervalType() -> (i => i * 1000000L), YearMonthIntervalType() -> (i => i * 12))

  test("integer-valued keys read in place pick the row Spark's ordering picks: the first extreme, never NULL") {
    for ((dataType, values) <- integral; extreme <- Seq(Extreme.Min, Extreme.Max); n <- Seq(0, 1, 3, 50, 400)) {
      val side = rows(dataType, n, values)
      val inPlace = ExtremeRows.of(extreme, side.iterator, BoundReference(1, dataType, nullable = true))
      val general = ExtremeRows.ofAny(extreme, side.iterator, BoundReference(1, dataType, nullable = true))
      val expected = side.filter(!_.isNullAt(1)).sortWith { (a, b) =>
        val (x, y) = (a.get(1, dataType).asInstanceOf[Number].longValue(), b.get(1, dataType).asInstanceOf[Number].longValue())
        if (extreme == Extreme.Min) x < y else x > y
      }.headOption.map(_.getLong(0))
      assert(inPlace.map(_.getLong(0)) == expected, s"$dataType $extreme over $n rows")
      assert(general.map(_.getLong(0)) == expected, s"$dataType $extreme over $n rows (general path)")
    }
  }
}
