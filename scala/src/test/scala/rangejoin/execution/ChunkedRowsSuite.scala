package rangejoin.execution

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, Literal, Murmur3Hash, Pmod, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/**
 * A binned join's chunked shuffle without Spark's shuffle in between: every partition key goes
 * where Spark's hash partitioning sends it; each row comes back exactly once, byte for byte, in
 * the partition its keys hash to and in its order there, over chunks cut by bytes (rows larger
 * than a chunk included), from UnsafeRows or any others; and a row or chunk handed out stays
 * valid until the next is asked for, `hasNext` included.
 */
class ChunkedRowsSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val schema: Seq[DataType] = Seq(LongType, IntegerType, StringType)
  private val toUnsafe = UnsafeProjection.create(schema.toArray)

  test("each partition's key is an int Spark's hash partitioning sends there") {
    for (n <- Seq(1, 2, 3, 7, 200, 1000, 4096)) {
      val keys = ChunkedRows.partitionKeys(n)
      assert(keys.length == n && keys.distinct.length == n)
      for ((k, p) <- keys.zipWithIndex) {
        // Written out here as Spark's HashPartitioning defines it: pmod(murmur3(k, seed 42), n).
        assert(Pmod(new Murmur3Hash(Seq(Literal(k))), Literal(n)).eval() == p, s"$n partitions: key $k")
      }
    }
  }

  /** Rows (key, id, payload), keys with duplicates and NULLs, payloads from empty to `maxPayload`. */
  private def rows(n: Int, rnd: Random, maxPayload: Int): Seq[InternalRow] = (0 until n).map { id =>
    val key: Any = if (rnd.nextInt(10) == 0) null else rnd.nextInt(50).toLong
    new GenericInternalRow(Array[Any](key, id, UTF8String.fromString("x" * rnd.nextInt(maxPayload + 1))))
  }

  /** Drains `it`, copying each row as it comes and checking it again after `hasNext`. */
  private def drain(it: Iterator[InternalRow]): Seq[InternalRow] = {
    val out = Seq.newBuilder[InternalRow]
    while (it.hasNext) {
      val row = it.next()
      val copy = row.copy()
      it.hasNext
      assert(row == copy, "a row changed when the next was looked for")
      out += copy
    }
    out.result()
  }

  private def roundTrip(input: Seq[InternalRow], n: Int, capacity: Int, asUnsafe: Boolean,
      unsafeChunks: Boolean = true): Unit = {
    val partitionId = HashPartitioning(Seq(BoundReference(0, LongType, nullable = true)), n).partitionIdExpression
    val source = if (asUnsafe) input.map(r => toUnsafe(r).copy()) else input
    val pairs = source.iterator.map(r => (partitionId.eval(r).asInstanceOf[Int], r))
    val chunks = drain(new ChunkedRows.Chunker(pairs, ChunkedRows.hashSink(n, capacity), () => toUnsafe, copies = false))
    val keys = ChunkedRows.partitionKeys(n)
    val byPartition = chunks.groupBy(c => keys.indexOf(c.getInt(0)))
    assert(byPartition.keySet.forall(_ >= 0))
    val expected = input.map(r => toUnsafe(r).copy()).groupBy(r => partitionId.eval(r).asInstanceOf[Int])
    for (p <- 0 until n) {
      val delivered = byPartition.getOrElse(p, Nil).map {
        case u: UnsafeRow if !unsafeChunks => new GenericInternalRow(Array[Any](u.getInt(0), u.getBinary(1)))
        case c => c
      }
      val out = drain(new ChunkedRows.Unchunker(delivered.iterator, schema.size))
      assert(out == expected.getOrElse(p, Nil), s"partition $p of $n")
    }
    // Where every row is under a quarter of a chunk, each chunk but a partition's last is over
    // three quarters full.
    val sizes = input.map(r => 8 + toUnsafe(r).getSizeInBytes)
    if (sizes.nonEmpty && sizes.max <= capacity / 4) {
      assert(chunks.size <= n + sizes.sum / (capacity * 3 / 4), "rows are shipped in chunks")
    }
    if (input.isEmpty) assert(chunks.isEmpty)
  }

  test("every row once, in its partition and order, over chunks cut by bytes") {
    val rnd = new Random(17)
    for (n <- Seq(1, 2, 7); capacity <- Seq(4096, 64 << 10); asUnsafe <- Seq(true, false)) {
      roundTrip(rows(3000, rnd, 40), n, capacity, asUnsafe)
    }
    roundTrip(Nil, 3, 4096, asUnsafe = true)
    roundTrip(rows(1, rnd, 0), 5, 4096, asUnsafe = true)
    // Rows larger than a chunk: each its own chunk, around the small ones.
    roundTrip(rows(300, rnd, 9000), 3, 4096, asUnsafe = true)
    // Chunks that arrive as rows of another kind (read through getBinary).
    roundTrip(rows(500, rnd, 30), 2, 4096, asUnsafe = true, unsafeChunks = false)
  }

  test("a sink keyed by partition number, as rangejoin's own shuffles read it: every row once, copies kept intact") {
    val rnd = new Random(5)
    for (n <- Seq(1, 3, 300); copies <- Seq(false, true); asUnsafe <- Seq(true, false)) {
      val input = rows(5000, rnd, 30)
      val pairs = input.map(r => (rnd.nextInt(n), if (asUnsafe) toUnsafe(r).copy() else r))
      val it = new ChunkedRows.Chunker(pairs.iterator, ChunkedRows.directSink(n, ChunkedRows.chunkBytes(n)),
        () => toUnsafe, copies)
      // Kept as handed out: with `copies`, each must stay as it was while later chunks are made.
      val kept = Seq.newBuilder[(InternalRow, InternalRow)]
      val chunks = Seq.newBuilder[(Int, InternalRow)]
      while (it.hasNext) {
        val chunk = it.next()
        kept += ((chunk, chunk.copy()))
        chunks += ((chunk.getInt(0), chunk.copy()))
      }
      if (copies) assert(kept.result().forall { case (handed, copy) => handed == copy }, "a copy each")
      val byPartition = chunks.result().groupBy(_._1)
      for (p <- 0 until n) {
        val out = drain(new ChunkedRows.Unchunker(byPartition.getOrElse(p, Nil).map(_._2).iterator, schema.size))
        assert(out == pairs.filter(_._1 == p).map(pr => toUnsafe(pr._2).copy()), s"partition $p of $n")
      }
    }
  }

  test("the chunk size shares a task's budget among partitions, within bounds") {
    assert(ChunkedRows.chunkBytes(1) == ChunkedRows.MaxChunkBytes)
    assert(ChunkedRows.chunkBytes(200) == ChunkedRows.TaskBytes / 200)
    assert(ChunkedRows.chunkBytes(100000) == ChunkedRows.MinChunkBytes)
  }
}
