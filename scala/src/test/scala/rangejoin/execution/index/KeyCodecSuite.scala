package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.SQLOrderingUtil
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.execution.TestSupport._
import rangejoin.condition.RangeOp
import rangejoin.execution.KeyCases
import rangejoin.condition.KeyTypes
import rangejoin.TestShims
/**
 * The order-preserving long encodings agree with Spark's order: `sortableDouble` with
 * SQLOrderingUtil.compareDoubles (NaN above everything and equal to every NaN, -0.0 equal to
 * 0.0) on random and special doubles, every other long-encoded type with catalyst's own
 * comparison; and `supports` accepts exactly the orderable atomic types rangejoin can sort.
 */
class KeyCodecSuite extends AnyFunSuite {

  private val rnd = new Random(20260101)

  private def sign(x: Int): Int = Integer.signum(x)

  private def randomDouble(): Double = rnd.nextInt(5) match {
    case 0 => java.lang.Double.longBitsToDouble(rnd.nextLong()) // any bit pattern: NaNs, subnormals
    case 1 => rnd.nextGaussian() * math.pow(10, rnd.nextInt(40) - 20)
    case 2 => (rnd.nextInt(9) - 4) / 2.0
    case 3 => KeyCases.doubleSpecials(rnd.nextInt(KeyCases.doubleSpecials.length))
    case _ =>
      val near = KeyCases.doubleSpecials(rnd.nextInt(KeyCases.doubleSpecials.length))
      if (rnd.nextBoolean()) Math.nextUp(near) else Math.nextDown(near)
  }

  private def randomNaN(): Double = {
    val mantissa = (rnd.nextLong() & 0x000fffffffffffffL) | (1L << rnd.nextInt(52))
    val signBit = if (rnd.nextBoolean()) Long.MinValue else 0L
    java.lang.Double.longBitsToDouble(signBit | 0x7ff0000000000000L | mantissa)
  }

  private def assertSameOrder(a: Double, b: Double): Unit = {
    val encoded = sign(java.lang.Long.compare(KeyTypes.sortableDouble(a), KeyTypes.sortableDouble(b)))
    val spark = sign(SQLOrderingUtil.compareDoubles(a, b))
    assert(encoded == spark, s"sortableDouble orders $a (${java.lang.Double.doubleToRawLongBits(a).toHexString}) " +
      s"and $b (${java.lang.Double.doubleToRawLongBits(b).toHexString}) as $encoded, Spark as $spark")
  }

  test("sortableDouble orders every pair of special values as Spark does") {
    for (a <- KeyCases.doubleSpecials; b <- KeyCases.doubleSpecials) assertSameOrder(a, b)
  }

  test("sortableDouble orders random doubles as Spark does") {
    for (_ <- 0 until 200000) assertSameOrder(randomDouble(), randomDouble())
  }

  test("sortableDouble: -0.0 encodes as 0.0, and every NaN bit pattern as one value") {
    assert(KeyTypes.sortableDouble(-0.0d) == KeyTypes.sortableDouble(0.0d))
    val canonical = KeyTypes.sortableDouble(Double.NaN)
    for (_ <- 0 until 10000) {
      val nan = randomNaN()
      assert(nan.isNaN)
      assert(KeyTypes.sortableDouble(nan) == canonical,
        s"NaN ${java.lang.Double.doubleToRawLongBits(nan).toHexString} encodes apart")
    }
    assert(canonical > KeyTypes.sortableDouble(Double.PositiveInfinity))
  }

  // Through the row reader the sorted index uses, so Float's widening to double is covered too.
  for (keyCase <- KeyCases.all if KeyTypes.longEncoder(keyCase.dataType).isDefined) {
    test(s"long encoding orders as Spark's comparison does: ${keyCase.name}") {
      val encode = KeyTypes.longEncoder(keyCase.dataType).get
      val lt = sparkHolds(RangeOp.Lt, keyCase.dataType)
      val gt = sparkHolds(RangeOp.Gt, keyCase.dataType)
      val values = Seq.fill(300)(keyCase.draw(rnd)) ++ keyCase.edges ++ keyCase.outside
      val row = new GenericInternalRow(1)
      def encoded(v: Any): Long = {
        row.update(0, v)
        encode(row, 0)
      }
      for (a <- values; b <- values) {
        val spark = if (lt(a, b)) -1 else if (gt(a, b)) 1 else 0
        assert(sign(java.lang.Long.compare(encoded(a), encoded(b))) == spark,
          s"${keyCase.name}: $a vs $b encode in a different order than Spark's ($spark)")
      }
    }
  }

  test("supports every orderable atomic type rangejoin sorts, and nothing else") {
    for (keyCase <- KeyCases.all) assert(KeyTypes.sortable(keyCase.dataType), keyCase.name)
    val unsupported = Seq(
      ArrayType(IntegerType), new StructType().add("a", IntegerType), MapType(IntegerType, IntegerType),
      CalendarIntervalType, NullType, ObjectType(classOf[String])) ++ TestShims.newerUnsortableTypes
    for (t <- unsupported) assert(!KeyTypes.sortable(t), t.simpleString)
  }
}
