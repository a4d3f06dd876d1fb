package rangejoin.execution.broadcast

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.condition.{Extreme, KeyTypes}

/**
 * The extreme row of a side: keys whose type orders as a long are read in place, every other key
 * through Spark's ordering; both must pick the row Spark's ordering picks (the first of equal
 * extremes: -0.0 and 0.0, every NaN), never a NULL.
 */
class ExtremeRowsSuite extends AnyFunSuite {

  private val random = new Random(11)

  /** Rows of (id, key), the key of `dataType` from `values`, NULL one time in five. */
  private def rows(dataType: DataType, n: Int, values: IndexedSeq[Any]): Seq[InternalRow] = {
    val toUnsafe = UnsafeProjection.create(Array[DataType](LongType, dataType))
    (0 until n).map { i =>
      val key = if (random.nextInt(5) == 0) null else values(random.nextInt(values.size))
      toUnsafe(InternalRow(i.toLong, key)).copy()
    }
  }

  private def ints(scale: Long, as: Long => Any): IndexedSeq[Any] = (-3L to 3L).map(i => as(i * scale))

  private val keys: Seq[(DataType, IndexedSeq[Any])] = Seq(
    LongType -> ints(Long.MaxValue / 4, identity), IntegerType -> ints(Int.MaxValue / 4, _.toInt),
    ShortType -> ints(1000, _.toShort), ByteType -> ints(40, _.toByte), DateType -> ints(9000, _.toInt),
    TimestampType -> ints(86400000000L, identity), TimestampNTZType -> ints(1, identity),
    DayTimeIntervalType() -> ints(1000000L, identity), YearMonthIntervalType() -> ints(12, _.toInt),
    BooleanType -> IndexedSeq(true, false),
    DoubleType -> IndexedSeq(Double.NaN, -0.0d, 0.0d, -1.5d, 2.5d, Double.NegativeInfinity, 1e300, Double.MinPositiveValue),
    FloatType -> IndexedSeq(Float.NaN, -0.0f, 0.0f, -1.5f, Float.PositiveInfinity, Float.MinValue),
    DecimalType(10, 2) -> ints(123456, l => Decimal(BigDecimal(l, 2), 10, 2)),
    // Not a long's order: the general path alone.
    StringType -> ints(7, l => UTF8String.fromString(s"k$l")),
    DecimalType(30, 2) -> ints(Long.MaxValue / 4, l => Decimal(BigDecimal(l) * 1000, 30, 2)))

  test("keys read in place pick the row Spark's ordering picks: the first extreme, never NULL") {
    for ((dataType, values) <- keys; extreme <- Seq(Extreme.Min, Extreme.Max); n <- Seq(0, 1, 3, 50, 400)) {
      val side = rows(dataType, n, values)
      val key = BoundReference(1, dataType, nullable = true)
      val ordering = PhysicalDataType.ordering(dataType)
      // A stable sort: among equal keys, the first row stays first.
      val expected = side.filter(!_.isNullAt(1)).sortWith { (a, b) =>
        val c = ordering.compare(a.get(1, dataType), b.get(1, dataType))
        if (extreme == Extreme.Min) c < 0 else c > 0
      }.headOption.map(_.getLong(0))
      val what = s"$dataType $extreme over $n rows (read in place: ${KeyTypes.longEncoder(dataType).isDefined})"
      assert(ExtremeRows.of(extreme, side.iterator, key).map(_.getLong(0)) == expected, what)
      assert(ExtremeRows.ofAny(extreme, side.iterator, key).map(_.getLong(0)) == expected, s"$what, general path")
    }
  }
}
