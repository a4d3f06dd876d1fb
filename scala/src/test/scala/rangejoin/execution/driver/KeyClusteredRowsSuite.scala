package rangejoin.execution.driver

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.condition.KeyTypes
import rangejoin.differential.SharedAcrossSmokeLines

/**
 * The streamed rows of a shuffled per-key join, reordered chunk by chunk by key: every row comes
 * out exactly once, byte for byte, each chunk in ascending key order (a NULL key as the smallest), over
 * chunk boundaries by rows and by bytes, from UnsafeRows or any other rows, and a row stays
 * valid until the next is asked for, `hasNext` included.
 */
class KeyClusteredRowsSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val schema: Seq[DataType] = Seq(LongType, IntegerType, StringType)
  private val toUnsafe = UnsafeProjection.create(schema.toArray)

  /** Rows (key, id, payload): keys in a narrow range (duplicates) or anywhere, some NULL. */
  private def rows(n: Int, rnd: Random, payload: Int => Int): Seq[InternalRow] = (0 until n).map { id =>
    val key: Any = rnd.nextInt(10) match {
      case 0 => null
      case 1 => rnd.nextLong()
      case 2 => if (rnd.nextBoolean()) Long.MinValue else Long.MaxValue
      case _ => rnd.nextInt(500).toLong - 250
    }
    new GenericInternalRow(Array[Any](key, id, UTF8String.fromString("x" * payload(id))))
  }

  /** The rows clustered, each copied as it comes (and checked again after `hasNext`). */
  private def clustered(input: Seq[InternalRow], asUnsafe: Boolean): (Seq[UnsafeRow], Long) = {
    val metric = new SQLMetric("sum")
    val source = if (asUnsafe) input.map(r => toUnsafe(r).copy()) else input
    val it = new KeyClusteredRows(source.iterator, 0, KeyTypes.longEncoder(LongType).get, schema, metric)
    val out = Seq.newBuilder[UnsafeRow]
    while (it.hasNext) {
      val row = it.next().asInstanceOf[UnsafeRow]
      val copy = row.copy()
      it.hasNext // may read the next chunk: the row must not change
      assert(row == copy)
      out += copy
    }
    (out.result(), metric.value)
  }

  private def key(row: InternalRow): Option[Long] = if (row.isNullAt(0)) None else Some(row.getLong(0))

  private def check(input: Seq[InternalRow], asUnsafe: Boolean, chunkBoundaries: Seq[Int]): Unit = {
    val (out, counted) = clustered(input, asUnsafe)
    assert(counted == input.size)
    val expected = input.map(r => toUnsafe(r).copy())
    assert(out.map(_.getInt(1)).sorted == expected.map(_.getInt(1)).sorted, "each row exactly once")
    val byId = expected.map(r => r.getInt(1) -> r).toMap
    out.foreach(r => assert(r == byId(r.getInt(1)), "byte for byte"))
    // Within each chunk, ascending by key (NULL first); chunks keep their rows.
    val chunks = (0 +: chunkBoundaries :+ input.size).distinct.sliding(2).toSeq
    for (Seq(from, until) <- chunks) {
      val chunk = out.slice(from, until)
      // A NULL key sorts as the smallest long.
      val keys = chunk.map(key(_).getOrElse(Long.MinValue))
      assert(keys.sliding(2).forall(p => p.size < 2 || p(0) <= p(1)), s"chunk [$from, $until) in key order")
      assert(chunk.map(_.getInt(1)).toSet == input.slice(from, until).map(_.getInt(1)).toSet)
    }
  }

  test("every row once, in key order within each chunk of rows") {
    val rnd = new Random(7)
    val n = 2 * KeyClusteredRows.ChunkRows + 123
    for (asUnsafe <- Seq(true, false)) {
      check(rows(n, rnd, _ => 3), asUnsafe, Seq(KeyClusteredRows.ChunkRows, 2 * KeyClusteredRows.ChunkRows))
    }
  }

  test("chunks end by bytes too: wide rows, one wider than a chunk") {
    val rnd = new Random(11)
    val wide = KeyClusteredRows.ChunkBytes / 4
    // Rows of just over 1/4 chunk: a chunk takes rows until it holds ChunkBytes or more, so 4;
    // the 6th row alone is larger than a chunk, and ends the chunk the 5th began.
    val input = rows(12, rnd, id => if (id == 5) KeyClusteredRows.ChunkBytes + 10 else wide)
    check(input, asUnsafe = true, Seq(4, 6, 10))
  }

  test("no rows, one row, all keys NULL") {
    assert(clustered(Nil, asUnsafe = true)._1.isEmpty)
    val one = rows(1, new Random(1), _ => 1)
    assert(clustered(one, asUnsafe = true)._1.map(_.getInt(1)) == Seq(0))
    val nulls = (0 until 100).map(i => new GenericInternalRow(Array[Any](null, i, UTF8String.fromString(""))))
    check(nulls, asUnsafe = false, Nil)
  }
}
