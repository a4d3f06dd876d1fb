package rangejoin.execution

import scala.util.Random

import org.apache.spark.sql.catalyst.util.DateTimeConstants.{MICROS_PER_DAY, NANOS_PER_SECOND, SECONDS_PER_DAY}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import rangejoin.{TestFeatureShims, TestShims}

/**
 * A key type rangejoin supports, with values in Spark's internal form.
 *
 * @param draw    a random key from a narrow pool, so that rows share keys
 * @param edges   the type's special values (extremes, NaN, -0.0, ...), mixed into some buffers
 * @param outside values beyond every drawn key, for probes only
 */
final case class KeyCase(
    name: String,
    dataType: DataType,
    draw: Random => Any,
    edges: Seq[Any] = Nil,
    outside: Seq[Any] = Nil)

object KeyCases {

  private def oneOf[T](values: T*): Random => T = rnd => values(rnd.nextInt(values.length))
  private def between(lo: Int, hi: Int)(rnd: Random): Int = lo + rnd.nextInt(hi - lo + 1)

  private val doubleNaNs = Seq(0x7ff8000000000000L, 0x7ff0000000000001L, 0xfff8000000000000L,
    0x7fffffffffffffffL, 0xffffffffffffffffL).map(java.lang.Double.longBitsToDouble)
  private val floatNaNs = Seq(0x7fc00000, 0x7f800001, 0xffc00000, 0x7fffffff, 0xffffffff)
    .map(java.lang.Float.intBitsToFloat)

  val doubleSpecials: Seq[Double] = doubleNaNs ++ Seq(-0.0d, 0.0d, Double.PositiveInfinity,
    Double.NegativeInfinity, Double.MinPositiveValue, -Double.MinPositiveValue, Double.MaxValue,
    -Double.MaxValue, java.lang.Double.MIN_NORMAL, 1.0d, -1.0d)
  private val floatSpecials: Seq[Float] = floatNaNs ++ Seq(-0.0f, 0.0f, Float.PositiveInfinity,
    Float.NegativeInfinity, Float.MinPositiveValue, -Float.MinPositiveValue, Float.MaxValue,
    -Float.MaxValue, java.lang.Float.MIN_NORMAL, 1.0f, -1.0f)

  private def decimal(unscaled: BigInt, precision: Int, scale: Int): Decimal =
    Decimal(BigDecimal(unscaled, scale), precision, scale)

  private def strings(collation: String): KeyCase = KeyCase(
    s"string collate $collation",
    TestShims.collated(collation),
    // Case, accents, trailing spaces, expansions (ß/ss), a dotted capital I, NUL, a surrogate pair.
    rnd => UTF8String.fromString(oneOf("", "a", "A", "b", "B", "ab", "aB", "Ab", "AB", "a ", "A ",
      "é", "É", "e", "E", "z", "Z", "ß", "ss", "SS", "İ", "i", "I", "\u0000", "\uD83D\uDE00",
      "\uFFFF", "aa", " a")(rnd)))

  private val bytes = Seq[Byte](0, 1, 127, -128, -1)

  val all: Seq[KeyCase] = Seq(
    KeyCase("boolean", BooleanType, _.nextBoolean(), edges = Seq(true, false)),
    KeyCase("tinyint", ByteType, between(-5, 5)(_).toByte, edges = Seq(0.toByte),
      outside = Seq(Byte.MinValue, Byte.MaxValue, (-6).toByte, 6.toByte)),
    KeyCase("smallint", ShortType, between(-5, 5)(_).toShort,
      outside = Seq(Short.MinValue, Short.MaxValue, (-6).toShort, 6.toShort)),
    KeyCase("int", IntegerType, between(-10, 10),
      outside = Seq(Int.MinValue, Int.MaxValue, -11, 11)),
    KeyCase("bigint", LongType, between(-10, 10)(_) * 1000000007L,
      outside = Seq(Long.MinValue, Long.MaxValue, -11000000077L, 11000000077L)),
    KeyCase("float", FloatType, rnd =>
      if (rnd.nextBoolean()) between(-4, 4)(rnd) / 2.0f else rnd.nextGaussian().toFloat * 1e3f,
      edges = floatSpecials),
    KeyCase("double", DoubleType, rnd =>
      if (rnd.nextBoolean()) between(-4, 4)(rnd) / 2.0d else rnd.nextGaussian() * 1e3,
      edges = doubleSpecials),
    KeyCase("decimal(10,2)", DecimalType(10, 2),
      rnd => decimal(between(-500, 500)(rnd), 10, 2),
      edges = Seq(decimal(0, 10, 2), decimal(1, 10, 2), decimal(-1, 10, 2)),
      outside = Seq(decimal(BigInt(10).pow(10) - 1, 10, 2), decimal(1 - BigInt(10).pow(10), 10, 2))),
    KeyCase("decimal(38,10)", DecimalType(38, 10),
      rnd => decimal(BigInt(between(-10, 10)(rnd)) * BigInt(10).pow(rnd.nextInt(25)), 38, 10),
      // Beyond a long's range, so a wrongly long-encoded decimal would misorder them.
      edges = Seq(decimal(BigInt(Long.MaxValue) + 1, 38, 10), decimal(BigInt(Long.MinValue) - 1, 38, 10)),
      outside = Seq(decimal(BigInt(10).pow(38) - 1, 38, 10), decimal(1 - BigInt(10).pow(38), 38, 10))),
    KeyCase("date", DateType, between(-10, 10),
      outside = Seq(-719162, 2932896, Int.MinValue, Int.MaxValue)),
    KeyCase("timestamp", TimestampType, between(-10, 10)(_) * MICROS_PER_DAY / 3,
      outside = Seq(Long.MinValue, Long.MaxValue)),
    KeyCase("timestamp_ntz", TimestampNTZType, between(-10, 10)(_) * MICROS_PER_DAY / 3,
      outside = Seq(Long.MinValue, Long.MaxValue)),
    strings("UTF8_BINARY"),
    strings("UTF8_LCASE"),
    strings("UNICODE"),
    strings("UNICODE_CI"),
    strings("UNICODE_CI_AI"),
    strings("UTF8_BINARY_RTRIM"),
    strings("de_CI_AI"),
    KeyCase("binary", BinaryType,
      rnd => Array.fill(rnd.nextInt(4))(bytes(rnd.nextInt(bytes.length)))),
    KeyCase("interval year to month", YearMonthIntervalType(), between(-30, 30),
      outside = Seq(Int.MinValue, Int.MaxValue)),
    KeyCase("interval year", YearMonthIntervalType(YearMonthIntervalType.YEAR),
      between(-3, 3)(_) * 12),
    KeyCase("interval day to second", DayTimeIntervalType(), between(-10, 10)(_) * 3600000000L,
      outside = Seq(Long.MinValue, Long.MaxValue)),
    KeyCase("time(6)", TestFeatureShims.time(6),
      rnd => between(1, 19)(rnd) * (SECONDS_PER_DAY / 20) * NANOS_PER_SECOND,
      outside = Seq(0L, SECONDS_PER_DAY * NANOS_PER_SECOND - 1))
  ).filterNot(_.dataType == TestShims.Unavailable) // types this Spark line lacks (TestShims)
}
