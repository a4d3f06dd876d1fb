package rangejoin.execution.index

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.Tier
import rangejoin.execution.TestSupport._

/**
 * The sorted broadcast merged from partitions' runs is the one the driver's sort builds from the
 * collected rows, row for row: the same rows in the same order, the same keys, origins and second
 * keys; for random keys (NULLs, duplicates, NaN, -0.0, extremes), rows of varying size, partitions
 * of every size (empty ones among them), runs shipped through Spark's serializers as task results
 * are, and a key that raises an error in one partition (then the unsorted buffer, in collected
 * order).
 */
class SortedRunsSuite extends AnyFunSuite {

  private def key(dataType: DataType) = BoundReference(0, dataType, nullable = true)
  private val second = BoundReference(1, LongType, nullable = true)

  private def value(dataType: DataType, rnd: Random): Any = rnd.nextInt(12) match {
    case 0 => null
    case 1 => dataType match {
      case DoubleType => Seq(Double.NaN, -0.0, 0.0, Double.NegativeInfinity, Double.MaxValue)(rnd.nextInt(5))
      case IntegerType => Seq(Int.MinValue, Int.MaxValue, 0)(rnd.nextInt(3))
      case _ => Seq(Long.MinValue, Long.MaxValue, 0L)(rnd.nextInt(3))
    }
    case _ =>
      val v = rnd.nextInt(20) - 10 // duplicates
      dataType match {
        case DoubleType => v.toDouble
        case IntegerType => v
        case _ => v.toLong
      }
  }

  /** `rows` split at random into `parts` partitions, some of them empty. */
  private def partitions(rows: Array[InternalRow], parts: Int, rnd: Random): Array[Array[InternalRow]] = {
    val cuts = (0 +: Seq.fill(parts - 1)(rnd.nextInt(rows.length + 1)) :+ rows.length).sorted
    cuts.sliding(2).map { case Seq(from, until) => rows.slice(from, until) }.toArray
  }

  /** Each partition's run, made from one reused row object as a scan hands rows over. */
  private def runs(parts: Array[Array[InternalRow]], schema: StructType, key: Expression,
      secondKey: Option[Expression]): Array[SortedPartition] = parts.map { part =>
    val reused = new UnsafeRow(schema.length)
    val handedOver = part.iterator.map { r =>
      val u = r.asInstanceOf[UnsafeRow]
      reused.pointTo(u.getBytes, u.getSizeInBytes)
      reused
    }
    SortedPartitions.sort(handedOver, schema, key, secondKey)
  }

  private def assertSame(merged: SortedBuffer, built: SortedBuffer, context: String): Unit = {
    assert(merged.isSorted == built.isSorted, context)
    assert(merged.numRows == built.numRows, context)
    assert(merged.keepsOrigins == built.keepsOrigins, context)
    for (i <- 0 until built.numRows) {
      assert(merged.row(i) == built.row(i), s"$context: row $i")
      if (built.keepsOrigins) assert(merged.origin(i) == built.origin(i), s"$context: origin of row $i")
    }
    assert(merged.longKeys.toSeq == built.longKeys.toSeq, context)
    assert(merged.secondKeys.toSeq == built.secondKeys.toSeq, context)
  }

  for (dataType <- Seq(LongType, IntegerType, DoubleType); withSecond <- Seq(false, true)) {
    test(s"merged runs equal the driver's sort: $dataType keys${if (withSecond) ", a second key" else ""}") {
      val rnd = new Random(dataType.hashCode + withSecond.hashCode)
      val secondKey = if (withSecond) Some(second) else None
      val schema = StructType(Seq(dataType, LongType, IntegerType, StringType).zipWithIndex.map {
        case (t, i) => StructField(s"c$i", t)
      })
      for (n <- Seq(0, 1, 2, 10, 100, 3000); parts <- Seq(1, 2, 3, 8)) {
        // Strings of up to 200 KB: rows that fill, and overflow, the packed arrays.
        val rows = unsafeRows(schema.map(_.dataType), (0 until n).map { id =>
          val text = if (rnd.nextInt(500) == 0) "x" * rnd.nextInt(200000) else "y" * rnd.nextInt(40)
          Seq(value(dataType, rnd), value(LongType, rnd), id, UTF8String.fromString(text))
        }).toArray
        val built = SortedBuffer.build(rows, key(dataType), secondKey, keepOrigins = true)
        val made = runs(partitions(rows, parts, rnd), schema, key(dataType), secondKey)
        // Tasks return their runs through whichever serializer Spark is set up with.
        for ((how, received) <- asShipped(made)) {
          assertSame(SortedPartitions.merge(received, key(dataType), secondKey, keepOrigins = true), built,
            s"n=$n, $parts partitions, $how")
        }
        // Without the origins, the same buffer but for them.
        val lean = SortedPartitions.merge(made, key(dataType), secondKey, keepOrigins = false)
        assert(lean.keepsOrigins == (n == 0) && lean.numRows == n && lean.longKeys.toSeq == built.longKeys.toSeq)
        assert((0 until n).forall(i => lean.row(i) == built.row(i)), s"n=$n, $parts partitions, no origins")
        if (n > 0) intercept[IllegalArgumentException](lean.origin(0))
      }
    }
  }

  test("a key that raises an error in one partition: the unsorted buffer, every row in collected order") {
    val rnd = new Random(3)
    val schema = StructType(Seq(StructField("a", IntegerType), StructField("b", IntegerType)))
    val failing = Add(BoundReference(0, IntegerType, nullable = true), Literal(Int.MaxValue - 100), EvalMode.ANSI)
    for (n <- Seq(1, 5, 100); position <- Seq(0, n / 2, n - 1); parts <- Seq(1, 3)) {
      val rows = unsafeRows(Seq(IntegerType, IntegerType),
        (0 until n).map(id => Seq(if (id == position) 101 else n - id, id))).toArray
      for ((how, received) <- asShipped(runs(partitions(rows, parts, rnd), schema, failing, None))) {
        val merged = SortedPartitions.merge(received, failing, None, keepOrigins = false)
        assert(!merged.isSorted, s"n=$n, failing at $position, $how")
        assert((0 until n).map(merged.row(_)) == rows.toSeq, s"n=$n, failing at $position, $how")
      }
    }
  }

  private def integer(dataType: DataType, rnd: Random): Any = {
    val (min, max) = dataType match {
      case ByteType => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
      case ShortType => (Short.MinValue.toLong, Short.MaxValue.toLong)
      case IntegerType | DateType => (Int.MinValue.toLong, Int.MaxValue.toLong)
      case _ => (Long.MinValue, Long.MaxValue)
    }
    val v = rnd.nextInt(12) match {
      case 0 => return null
      case 1 => Seq(min, max, 0L)(rnd.nextInt(3))
      case _ => rnd.nextInt(20) - 10L // duplicates
    }
    dataType match {
      case ByteType => v.toByte
      case ShortType => v.toShort
      case IntegerType | DateType => v.toInt
      case _ => v
    }
  }

  // About 2 s a type, on every line: the smoke lines share the types between them.
  for (dataType <- Tier.acrossSmokeLines(Seq(ByteType, ShortType, IntegerType, DateType, LongType, TimestampType))) {
    test(s"a side whose only column is its $dataType key travels as its keys, and its rows are the driver's sort's, byte for byte") {
      val rnd = new Random(dataType.hashCode)
      val schema = StructType(Seq(StructField("k", dataType)))
      for (n <- Seq(0, 1, 2, 10, 100, 20000); parts <- Seq(1, 2, 3, 8)) {
        val rows = unsafeRows(Seq(dataType), (0 until n).map(_ => Seq(integer(dataType, rnd)))).toArray
        val built = SortedBuffer.build(rows, key(dataType), keepOrigins = true)
        val made = runs(partitions(rows, parts, rnd), schema, key(dataType), None)
        assert(made.forall(r => r.keyOnly && r.chunks.isEmpty && r.dataSize == 16L * r.numRows))
        for ((how, received) <- asShipped(made)) {
          val merged = SortedPartitions.merge(received, key(dataType), None, keepOrigins = true)
          val context = s"n=$n, $parts partitions, $how"
          if (n > 0) assert(merged.copyOfRow(n - 1) == built.row(n - 1), context) // before the rows are built
          assertSame(merged, built, context)
          // The broadcast: the rows are rebuilt from the keys wherever it is read.
          for ((shipped, read) <- asShipped(merged)) assertSame(read, built, s"$context, broadcast $shipped")
        }
      }
    }
  }

  test("only a lone integer column that is the key travels as its keys") {
    def one(t: DataType) = StructType(Seq(StructField("k", t)))
    for (t <- Seq(ByteType, ShortType, IntegerType, DateType, LongType, TimestampType, TimestampNTZType))
      assert(SortedPartitions.keyOnly(key(t), one(t)), t)
    // Keys that fold values (-0.0 and 0.0, NaNs), or are not the row's one column.
    for (t <- Seq(DoubleType, FloatType, DecimalType(10, 2), BooleanType))
      assert(!SortedPartitions.keyOnly(key(t), one(t)), t)
    assert(!SortedPartitions.keyOnly(key(LongType), StructType(one(LongType).fields :+ StructField("v", LongType))))
    assert(!SortedPartitions.keyOnly(Add(key(LongType), Literal(1L)), one(LongType)))
  }

  test("only long-stored keys without equality keys are merged; other sides sort on the driver") {
    assert(SortedPartitions.supports(key(LongType), Nil))
    assert(SortedPartitions.supports(key(DoubleType), Nil))
    assert(SortedPartitions.supports(key(TimestampType), Nil))
    assert(!SortedPartitions.supports(key(StringType), Nil))
    assert(!SortedPartitions.supports(key(DecimalType(30, 2)), Nil))
    assert(!SortedPartitions.supports(key(LongType), Seq(key(IntegerType))))
  }
}
