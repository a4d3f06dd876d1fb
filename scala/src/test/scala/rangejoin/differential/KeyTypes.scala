package rangejoin.differential

import java.time._

import scala.util.Random

import org.apache.spark.sql.types._

import rangejoin.{TestFeatureShims, TestShims}

/**
 * A key expression template over one column (`$c`), and whether rangejoin may treat it as unable
 * to fail (see rangejoin.planning.CannotFail), with ANSI mode on and off: that decides whether it
 * can drive when it is not the condition's first conjunct. Without ANSI, arithmetic wraps and
 * casts give NULL instead of failing.
 */
final case class KeyExpr(name: String, template: String, cannotFail: Boolean,
    cannotFailWithoutAnsi: Boolean) {
  def apply(column: String): String = template.replace("$c", column)
  def cannotFail(ansi: Boolean): Boolean = if (ansi) cannotFail else cannotFailWithoutAnsi
}

object KeyExpr {
  val Plain: KeyExpr = KeyExpr("plain", "$c", cannotFail = true, cannotFailWithoutAnsi = true)
  /** Arithmetic and casts: may fail in ANSI mode only. */
  def ansiFailing(name: String, template: String): KeyExpr = KeyExpr(name, template, false, true)
  /** Functions rangejoin does not know to be safe. */
  def mayFail(name: String, template: String): KeyExpr = KeyExpr(name, template, false, false)
  def safe(name: String, template: String): KeyExpr = KeyExpr(name, template, true, true)
}

/**
 * A key type under test: the key columns' types on the left and right (different when the
 * analyzer must coerce them), a small domain of values, so that duplicates are common, with the
 * edge values first, and the key expressions that make sense for it. `coercionCannotFail` is false
 * where the cast the analyzer puts on a key to give both sides one type may fail (date to
 * timestamp overflows): such keys drive only from the condition's first conjunct.
 */
final case class KeyType(
    name: String,
    left: DataType,
    right: DataType,
    domain: Seq[Any],
    exprs: Seq[KeyExpr] = Seq(KeyExpr.Plain),
    rightDomain: Option[Seq[Any]] = None,
    coercionCannotFail: Boolean = true) {

  def draw(r: Random, side: Side): Any = {
    val values = if (side == Side.Right) rightDomain.getOrElse(domain) else domain
    values(r.nextInt(values.size))
  }
}

sealed trait Side
object Side {
  case object Left extends Side
  case object Right extends Side
}

object KeyTypes {
  private def plainAnd(other: KeyExpr) = Seq(KeyExpr.Plain, other)

  private val floats: Seq[Any] = Seq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity,
    Float.NegativeInfinity, Float.MinPositiveValue, Float.MaxValue, -1.5f, -1.0f, 0.5f, 1.0f, 2.5f)
  private val doubles: Seq[Any] = Seq(Double.NaN, -0.0d, 0.0d, Double.PositiveInfinity,
    Double.NegativeInfinity, Double.MinPositiveValue, Double.MaxValue, -1.5d, -1.0d, 0.5d, 1.0d, 2.5d)
  private val strings = Seq("", "a", "A", "b", "B", "ab", "aB", "a ", "\u00e9", "E\u0301", "z", "\u00ff")

  private def decimals(scale: Int, values: Seq[String]) =
    values.map(v => new java.math.BigDecimal(v).setScale(scale))

  val all: Seq[KeyType] = Seq(
    KeyType("boolean", BooleanType, BooleanType, Seq(true, false), plainAnd(KeyExpr.safe("not", "(NOT $c)"))),
    KeyType("tinyint", ByteType, ByteType, Seq[Byte](Byte.MinValue, Byte.MaxValue, -2, -1, 0, 1, 2, 3),
      plainAnd(KeyExpr.ansiFailing("plus", "$c + 1"))),
    KeyType("smallint", ShortType, ShortType, Seq[Short](Short.MinValue, Short.MaxValue, -2, 0, 1, 2, 3),
      plainAnd(KeyExpr.safe("toint", "cast($c AS INT)"))),
    KeyType("int", IntegerType, IntegerType, Seq(Int.MinValue, Int.MaxValue, -3, -1, 0, 1, 2, 3, 5),
      Seq(KeyExpr.Plain, KeyExpr.ansiFailing("plus", "$c + 1"), KeyExpr.safe("todouble", "cast($c AS DOUBLE)"))),
    KeyType("bigint", LongType, LongType, Seq(Long.MinValue, Long.MaxValue, -3L, -1L, 0L, 1L, 2L, 4L),
      plainAnd(KeyExpr.ansiFailing("minus", "$c - 2"))),
    KeyType("float", FloatType, FloatType, floats, plainAnd(KeyExpr.safe("times", "$c * 2"))),
    KeyType("double", DoubleType, DoubleType, doubles,
      Seq(KeyExpr.Plain, KeyExpr.safe("plus", "$c + 0.5"),
        KeyExpr.ansiFailing("todecimal", "cast($c AS DECIMAL(20, 4))"))),
    KeyType("decimal(10,2)", DecimalType(10, 2), DecimalType(10, 2),
      decimals(2, Seq("-99999999.99", "99999999.99", "-1.25", "-0.5", "0", "0.25", "1", "1.25", "2.5")),
      plainAnd(KeyExpr.ansiFailing("times", "$c * 3"))),
    KeyType("decimal(38,10)", DecimalType(38, 10), DecimalType(38, 10),
      decimals(10, Seq("-9999999999999999999999999999.9999999999", "9999999999999999999999999999.9999999999",
        "-1.0000000001", "0", "0.0000000001", "1", "12345678901234567890.5")),
      plainAnd(KeyExpr.ansiFailing("todouble", "cast($c AS DOUBLE)"))),
    KeyType("date", DateType, DateType,
      Seq(LocalDate.of(1, 1, 1), LocalDate.of(9999, 12, 31), LocalDate.of(1969, 12, 31),
        LocalDate.of(1970, 1, 1), LocalDate.of(2024, 2, 29), LocalDate.of(2024, 3, 1), LocalDate.of(2024, 3, 2)),
      Seq(KeyExpr.Plain, KeyExpr.mayFail("date_add", "date_add($c, 1)"),
        KeyExpr.mayFail("totimestamp", "cast($c AS TIMESTAMP)"))),
    KeyType("timestamp", TimestampType, TimestampType,
      Seq(Instant.parse("0001-01-01T00:00:00Z"), Instant.parse("1969-12-31T23:59:59.999999Z"),
        Instant.parse("1970-01-01T00:00:00Z"), Instant.parse("2024-03-10T10:00:00Z"),
        Instant.parse("2024-03-10T11:30:00Z"), Instant.parse("2024-03-10T12:00:00.000001Z")),
      Seq(KeyExpr.Plain, KeyExpr.mayFail("plus90min", "$c + INTERVAL 90 MINUTES"),
        KeyExpr.mayFail("todate", "cast($c AS DATE)"))),
    KeyType("timestamp_ntz", TimestampNTZType, TimestampNTZType,
      Seq(LocalDateTime.of(1, 1, 1, 0, 0), LocalDateTime.of(1970, 1, 1, 0, 0),
        LocalDateTime.of(2024, 3, 10, 10, 0), LocalDateTime.of(2024, 3, 10, 11, 0, 0, 1000),
        LocalDateTime.of(2024, 3, 11, 10, 0)),
      plainAnd(KeyExpr.mayFail("plus1day", "$c + INTERVAL 1 DAY"))),
    KeyType("string", StringType, StringType, strings,
      Seq(KeyExpr.Plain, KeyExpr.mayFail("concat", "concat($c, 'x')"), KeyExpr.mayFail("upper", "upper($c)"))),
    KeyType("string_lcase", TestShims.collated("UTF8_LCASE"), TestShims.collated("UTF8_LCASE"), strings,
      plainAnd(KeyExpr.mayFail("concat", "concat($c, 'x')"))),
    KeyType("string_unicode_ci", TestShims.collated("UNICODE_CI"), TestShims.collated("UNICODE_CI"), strings),
    KeyType("binary", BinaryType, BinaryType,
      Seq(Array[Byte](), Array[Byte](0), Array[Byte](0, 0), Array[Byte](1), Array[Byte](-1),
        Array[Byte](127, 1), Array[Byte](-128)),
      plainAnd(KeyExpr.mayFail("concat", "concat($c, X'00')"))),
    KeyType("interval_ym", YearMonthIntervalType(), YearMonthIntervalType(),
      Seq(-13, -1, 0, 1, 2, 12).map(Period.ofMonths(_))),
    KeyType("interval_dt", DayTimeIntervalType(), DayTimeIntervalType(),
      Seq(Duration.ofDays(-1), Duration.ZERO, Duration.ofSeconds(1), Duration.ofMinutes(90),
        Duration.ofNanos(1000))),
    KeyType("time", TestFeatureShims.time(), TestFeatureShims.time(),
      Seq(LocalTime.MIN, LocalTime.of(0, 0, 1), LocalTime.NOON, LocalTime.of(23, 59, 59, 999999000))),
    KeyType("int_vs_bigint", IntegerType, LongType, Seq(Int.MinValue, -1, 0, 1, 2, Int.MaxValue),
      rightDomain = Some(Seq(Long.MinValue, -1L, 0L, 2L, Int.MaxValue.toLong + 1, Long.MaxValue))),
    KeyType("int_vs_double", IntegerType, DoubleType, Seq(-2, 0, 1, 3),
      rightDomain = Some(Seq(Double.NaN, -0.0d, 0.5d, 1.0d, Double.NegativeInfinity))),
    KeyType("date_vs_timestamp", DateType, TimestampType,
      Seq(LocalDate.of(2024, 3, 10), LocalDate.of(2024, 3, 11), LocalDate.of(1970, 1, 1)),
      rightDomain = Some(Seq(Instant.parse("2024-03-10T00:00:00Z"), Instant.parse("2024-03-10T12:00:00Z"),
        Instant.parse("1969-12-31T23:00:00Z"))), coercionCannotFail = false),
    KeyType("decimal_vs_int", DecimalType(10, 2), IntegerType,
      decimals(2, Seq("-1.50", "0", "0.99", "1", "2.01")), rightDomain = Some(Seq(-1, 0, 1, 2)))
  ).filterNot(_.left == TestShims.Unavailable) // types this Spark line lacks (TestShims)
}
