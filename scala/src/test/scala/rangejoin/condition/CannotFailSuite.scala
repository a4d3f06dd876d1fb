package rangejoin.condition

import scala.util.Try

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.optimizer.NormalizeNaNAndZero
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/**
 * The audit of [[CannotFail]]: every cast and arithmetic expression it accepts, over every pair of
 * types Spark casts between and every evaluation mode (ANSI, legacy, try), is evaluated on each
 * type's extreme values, interpreted and in generated code, and must never raise. What it must
 * refuse (casts that overflow, division, ...) is listed too, so that widening the list is a
 * decision this suite sees.
 */
class CannotFailSuite extends AnyFunSuite {

  private def decimal(p: Int, s: Int, v: String) = Decimal(BigDecimal(v), p, s)

  /** Each type with its extreme and awkward values, in Spark's internal form. */
  private val values: Seq[(DataType, Seq[Any])] = Seq(
    BooleanType -> Seq(true, false),
    ByteType -> Seq(Byte.MinValue, Byte.MaxValue, 0.toByte, -1.toByte),
    ShortType -> Seq(Short.MinValue, Short.MaxValue, 0.toShort),
    IntegerType -> Seq(Int.MinValue, Int.MaxValue, 0, -1),
    LongType -> Seq(Long.MinValue, Long.MaxValue, 0L, -1L),
    FloatType -> Seq(Float.NaN, Float.PositiveInfinity, Float.NegativeInfinity, Float.MaxValue,
      -Float.MaxValue, -0.0f, Float.MinPositiveValue),
    DoubleType -> Seq(Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, Double.MaxValue,
      -Double.MaxValue, -0.0d, Double.MinPositiveValue),
    DecimalType(3, 1) -> Seq(decimal(3, 1, "99.9"), decimal(3, 1, "-99.9"), decimal(3, 1, "0")),
    DecimalType(10, 2) -> Seq(decimal(10, 2, "99999999.99"), decimal(10, 2, "-99999999.99")),
    DecimalType(18, 0) -> Seq(decimal(18, 0, "999999999999999999"), decimal(18, 0, "-999999999999999999")),
    DecimalType(38, 10) -> Seq(decimal(38, 10, "9999999999999999999999999999.9999999999"),
      decimal(38, 10, "-9999999999999999999999999999.9999999999")),
    DecimalType(38, 0) -> Seq(decimal(38, 0, "99999999999999999999999999999999999999"),
      decimal(38, 0, "-99999999999999999999999999999999999999")),
    DateType -> Seq(Int.MinValue, Int.MaxValue, 0, 200000000),
    TimestampType -> Seq(Long.MinValue, Long.MaxValue, 0L),
    TimestampNTZType -> Seq(Long.MinValue, Long.MaxValue, 0L),
    StringType -> Seq("", "abc", "1e400", "NaN", "99999999999999999999999", "2020-01-01", "1 day")
      .map(UTF8String.fromString),
    YearMonthIntervalType() -> Seq(Int.MinValue, Int.MaxValue, 0),
    DayTimeIntervalType() -> Seq(Long.MinValue, Long.MaxValue, 0L))

  private val types = values.map(_._1)
  private val modes = Seq(EvalMode.ANSI, EvalMode.LEGACY, EvalMode.TRY)

  private def column(t: DataType, i: Int) = BoundReference(i, t, nullable = true)

  // Each expression's generated projection, made once for all its rows: making it per row
  // generated the same code again for every row.
  private val generated = scala.collection.mutable.Map.empty[Expression, Try[UnsafeProjection]]

  /** Whether evaluating `e` on `row` raised, interpreted or in generated code; the error if so. */
  private def raises(e: Expression, row: InternalRow): Option[Throwable] = {
    Try(e.eval(row)).failed.toOption.orElse(
      generated.getOrElseUpdate(e, Try(UnsafeProjection.create(Seq(e)))).flatMap(p => Try(p(row))).failed.toOption)
  }

  private def casts: Seq[Expression] = for {
    from <- types
    to <- types
    mode <- modes
    if Cast.canCast(from, to)
  } yield Cast(column(from, 0), to, Some("UTC"), mode)

  private def arithmetic: Seq[Expression] = for {
    t <- types
    mode <- modes
    op <- Seq[(Expression, Expression, EvalMode.Value) => Expression](Add(_, _, _), Subtract(_, _, _), Multiply(_, _, _))
    e = op(column(t, 0), column(t, 1), mode)
    if e.checkInputDataTypes().isSuccess
  } yield e

  private def remainders: Seq[Expression] = for {
    t <- types
    mode <- modes
    divisor <- Seq(-1L, 3L, 0L)
    e = Remainder(column(t, 0), Cast(Literal(divisor), t), mode)
    if e.checkInputDataTypes().isSuccess
  } yield e.withNewChildren(Seq(e.children.head, Literal.create(e.children(1).eval(), t)))

  private def rows(e: Expression): Seq[InternalRow] = {
    val inputs = e.collect { case b: BoundReference => b }.sortBy(_.ordinal).map(b => values.toMap.apply(b.dataType))
    inputs.foldLeft(Seq(Seq.empty[Any])) { (acc, vs) => for (a <- acc; v <- vs) yield a :+ v }
      .map(InternalRow.fromSeq)
  }

  test("no cast or arithmetic it accepts raises, on any type's extreme values, in any mode") {
    val accepted = (casts ++ arithmetic ++ remainders).filter(CannotFail(_))
    val failures = for {
      e <- accepted
      row <- rows(e)
      error <- raises(e, row)
    } yield s"$e on $row: ${error.getClass.getSimpleName}: ${error.getMessage.linesIterator.next()}"
    assert(failures.isEmpty, failures.take(20).mkString("\n"))
    // The audit covers something: numeric up-casts in every mode, all numeric casts without ANSI.
    assert(accepted.size > 300, accepted.size)
  }

  test("casts and arithmetic that can raise are refused") {
    val refused = Seq(
      // An up-cast, yet it multiplies days into microseconds with multiplyExact: overflows.
      Cast(column(DateType, 0), TimestampType, Some("UTC"), EvalMode.LEGACY),
      Cast(column(DateType, 0), TimestampType, Some("UTC"), EvalMode.ANSI),
      Cast(column(DateType, 0), TimestampNTZType, Some("UTC"), EvalMode.LEGACY),
      // Throws on malformed input even without ANSI.
      Cast(column(StringType, 0), DayTimeIntervalType(), Some("UTC"), EvalMode.LEGACY),
      Cast(column(LongType, 0), IntegerType, Some("UTC"), EvalMode.ANSI),
      Cast(column(DoubleType, 0), LongType, Some("UTC"), EvalMode.ANSI),
      Add(column(IntegerType, 0), column(IntegerType, 1), EvalMode.ANSI),
      Add(column(DayTimeIntervalType(), 0), column(DayTimeIntervalType(), 1), EvalMode.LEGACY),
      Divide(column(DoubleType, 0), column(DoubleType, 1), EvalMode.LEGACY),
      Remainder(column(IntegerType, 0), column(IntegerType, 1), EvalMode.LEGACY),
      Remainder(column(IntegerType, 0), Literal(0), EvalMode.ANSI),
      UnaryMinus(column(IntegerType, 0), failOnError = true))
    refused.foreach(e => assert(!CannotFail(e), e))
    // Each refusal is a real risk: some of them do raise on the values above.
    assert(refused.exists(e => rows(e).exists(raises(e, _).isDefined)))
  }

  test("floating-point join keys as the optimizer normalizes them cannot fail") {
    for (t <- Seq(FloatType, DoubleType)) {
      val e = KnownFloatingPointNormalized(NormalizeNaNAndZero(column(t, 0)))
      assert(CannotFail(e), e)
      rows(e).foreach(row => assert(raises(e, row).isEmpty, (e, row)))
    }
    assert(!CannotFail(KnownFloatingPointNormalized(NormalizeNaNAndZero(
      Divide(column(DoubleType, 0), column(DoubleType, 1), EvalMode.ANSI)))))
  }

  test("comparisons and connectives over what cannot fail cannot fail") {
    val x = column(IntegerType, 0)
    val y = column(IntegerType, 1)
    Seq(IsNotNull(x), And(LessThan(x, y), Or(IsNull(y), EqualTo(x, Literal(3)))),
      Not(GreaterThanOrEqual(Cast(x, LongType, None, EvalMode.ANSI), Literal(1L))),
      In(x, Seq(Literal(1), Literal(2))), Alias(Coalesce(Seq(x, y)), "c")(),
      // How the optimizer writes `x IN (subquery)` next to a residual.
      If(IsNull(EqualTo(x, y)), Literal(null, BooleanType), Literal(false)))
      .foreach(e => assert(CannotFail(e), e))
    assert(!CannotFail(EqualTo(Divide(Cast(x, DoubleType), Literal(0.0)), Literal(1.0))))
    assert(!CannotFail(LessThan(Add(x, y, EvalMode.ANSI), Literal(1))))
    assert(!CannotFail(Rand(Literal(1L))))
  }
}
