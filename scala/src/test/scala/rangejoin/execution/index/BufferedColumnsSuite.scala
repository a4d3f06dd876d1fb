package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * A buffered column's array holds each row's value where the row's getter reads it, the NULL
 * array marks exactly the NULL rows (and is absent when there are none), and each column is
 * built once however many tasks ask at once.
 */
class BufferedColumnsSuite extends AnyFunSuite {

  private val types = Seq[DataType](BooleanType, ByteType, ShortType, IntegerType, LongType, FloatType,
    DoubleType, DateType, TimestampType, TimestampNTZType, DayTimeIntervalType(), YearMonthIntervalType())

  private def value(dataType: DataType, rnd: Random): Any = CodeGenerator.javaType(dataType) match {
    case "boolean" => rnd.nextBoolean()
    case "byte" => rnd.nextInt().toByte
    case "short" => rnd.nextInt().toShort
    case "int" => rnd.nextInt()
    case "long" => Seq(Long.MinValue, Long.MaxValue, rnd.nextLong())(rnd.nextInt(3))
    case "float" => Seq(Float.NaN, -0.0f, rnd.nextFloat())(rnd.nextInt(3))
    case "double" => Seq(Double.NaN, -0.0, Double.NegativeInfinity, rnd.nextDouble())(rnd.nextInt(4))
  }

  private def rows(n: Int, nullEvery: Int, rnd: Random): Array[InternalRow] = {
    val project = UnsafeProjection.create(types.toArray)
    Array.tabulate(n) { i =>
      val values = types.zipWithIndex.map { case (t, c) => if (nullEvery > 0 && (i + c) % nullEvery == 0) null else value(t, rnd) }
      project(InternalRow.fromSeq(values)).copy()
    }
  }

  private def read(row: InternalRow, ordinal: Int, dataType: DataType): Any = row.get(ordinal, dataType)

  private def element(array: AnyRef, i: Int): Any = array match {
    case a: Array[Boolean] => a(i)
    case a: Array[Byte] => a(i)
    case a: Array[Short] => a(i)
    case a: Array[Int] => a(i)
    case a: Array[Long] => a(i)
    case a: Array[Float] => a(i)
    case a: Array[Double] => a(i)
  }

  test("every fixed-width type: values and NULLs") {
    val rnd = new Random(7)
    for (n <- Seq(0, 1, 5, 300); nullEvery <- Seq(0, 1, 3)) {
      val buffered = rows(n, nullEvery, rnd)
      val columns = new BufferedColumns(buffered)
      for ((t, c) <- types.zipWithIndex) {
        assert(BufferedColumns.supports(t), t)
        val values = columns.values(c, CodeGenerator.javaType(t))
        val nulls = columns.nulls(c)
        val anyNull = buffered.exists(_.isNullAt(c))
        assert((nulls != null) == anyNull, s"$t, $n rows, NULL every $nullEvery")
        for (i <- 0 until n) {
          val isNull = nulls != null && nulls(i)
          assert(isNull == buffered(i).isNullAt(c), s"$t row $i")
          // Objects.equals: NaN equals NaN, -0.0 differs from 0.0 (Scala's == on boxes would not).
          if (!isNull) assert(java.util.Objects.equals(element(values, i), read(buffered(i), c, t)), s"$t row $i")
        }
        assert(java.lang.reflect.Array.getLength(values) == n)
        if (nulls != null) assert(nulls.length == n)
        assert(columns.values(c, CodeGenerator.javaType(t)) eq values, "built once")
      }
    }
  }

  test("types read from the row have no array") {
    for (t <- Seq(StringType, BinaryType, DecimalType(10, 2), DecimalType(38, 0), ArrayType(IntegerType),
        new StructType().add("a", IntegerType), CalendarIntervalType)) {
      assert(!BufferedColumns.supports(t), t)
    }
  }

  test("tasks asking at once share one build") {
    val columns = new BufferedColumns(rows(100000, 5, new Random(3)))
    val pool = java.util.concurrent.Executors.newFixedThreadPool(4)
    try {
      val asked = (1 to 8).map(_ => pool.submit(() => columns.values(4, "long")))
      val arrays = asked.map(_.get())
      assert(arrays.forall(_ eq arrays.head))
    } finally pool.shutdown()
  }
}
