package rangejoin.execution

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.types.IntegerType
import org.apache.spark.unsafe.Platform

/**
 * Rows packed into chunks by target partition, and back: what [[BinChunksExec]] and
 * [[BinUnchunkExec]] do, with no plan in it.
 * {{{
 *   chunk of partition p:   | size 8 B | row bytes | size | row bytes | ...   (each row 8-aligned)
 *   shuffled row:           (key of p, chunk)        Spark's hash of the key sends it to p
 * }}}
 */
private[rangejoin] object ChunkedRows {

  /** Bytes buffered a task for all partitions' chunks, shared out among them... */
  val TaskBytes: Int = 4 << 20
  /** ...but each chunk at least this and at most that. */
  val MinChunkBytes: Int = 4 << 10
  val MaxChunkBytes: Int = 256 << 10

  def chunkBytes(numPartitions: Int): Int =
    math.max(MinChunkBytes, math.min(MaxChunkBytes, TaskBytes / math.max(1, numPartitions)))

  private val keysCache = new ConcurrentHashMap[Integer, Array[Int]]()

  /**
   * For each partition `p` of `numPartitions`, an int that Spark's hash partitioning of one int
   * column sends to `p` (the exchange's own expression evaluated, so the same by construction).
   * A search over 0, 1, 2, ...: about `n ln n` tries for `n` partitions.
   */
  def partitionKeys(numPartitions: Int): Array[Int] = keysCache.computeIfAbsent(numPartitions, _ => {
    val partitionOf = HashPartitioning(Seq(BoundReference(0, IntegerType, nullable = false)), numPartitions)
      .partitionIdExpression
    val keys = Array.fill(numPartitions)(-1)
    var found = 0
    var k = 0
    val row = new GenericInternalRow(1)
    while (found < numPartitions) {
      row.update(0, k)
      val p = partitionOf.eval(row).asInstanceOf[Int]
      if (keys(p) < 0) { keys(p) = k; found += 1 }
      k += 1
    }
    keys
  })

  /** A sink whose chunk rows carry keys Spark's hash partitioning sends to their partitions. */
  def hashSink(numPartitions: Int, capacity: Int): ChunkSink = new ChunkSink(partitionKeys(numPartitions), capacity)

  /** A sink whose chunk rows carry their partition's number (for a partitioner that reads it). */
  def directSink(numPartitions: Int, capacity: Int): ChunkSink = new ChunkSink(Array.range(0, numPartitions), capacity)

  /**
   * Chunks being filled, one a partition (`keys.length` of them): a row [[add]]ed to its
   * partition's chunk, a chunk sent out (as the [[chunk]] row `(keys(partition), chunk)`) when
   * the next row would take it past `capacity` bytes, and at the end every chunk left
   * ([[flushNext]]). Two chunk rows in turn: the one handed out stays valid while the next is
   * written.
   */
  final class ChunkSink(keys: Array[Int], capacity: Int) {
    private[this] val numPartitions = keys.length
    private[this] val buffers = new Array[Array[Byte]](numPartitions)
    private[this] val used = new Array[Int](numPartitions)
    private[this] val writers = Array(new UnsafeRowWriter(2, capacity), new UnsafeRowWriter(2, capacity))
    private[this] var writer = writers(0)
    private[this] var flushed = 0

    /** Adds `row` to partition `p`'s chunk; true if that sent the chunk before it out. */
    def add(p: Int, row: UnsafeRow): Boolean = {
      val size = 8 + row.getSizeInBytes
      val full = used(p) > 0 && used(p) + size > capacity
      if (full) emit(p)
      append(p, row, size)
      full
    }

    /** Sends out the next chunk left once every row is in; false when none is left. */
    def flushNext(): Boolean = {
      while (flushed < numPartitions) {
        val p = flushed
        flushed += 1
        if (used(p) > 0) { emit(p); return true }
      }
      false
    }

    /** The chunk last sent out. */
    def chunk(): UnsafeRow = writer.getRow

    private def append(p: Int, row: UnsafeRow, size: Int): Unit = {
      var buffer = buffers(p)
      if (buffer == null || used(p) + size > buffer.length) {
        val grown = new Array[Byte](math.max(used(p) + size, if (buffer == null) math.min(capacity, 1 << 12) else buffer.length * 2))
        if (buffer != null) System.arraycopy(buffer, 0, grown, 0, used(p))
        buffer = grown
        buffers(p) = buffer
      }
      Platform.putLong(buffer, Platform.BYTE_ARRAY_OFFSET + used(p), row.getSizeInBytes)
      row.writeToMemory(buffer, Platform.BYTE_ARRAY_OFFSET + used(p) + 8)
      used(p) += size
    }

    private def emit(p: Int): Unit = {
      writer = if (writer eq writers(0)) writers(1) else writers(0)
      writer.reset()
      writer.write(0, keys(p))
      writer.write(1, buffers(p), 0, used(p))
      used(p) = 0
    }
  }

  /**
   * `(partition, row)` pairs as chunk rows through `sink` (a chunk row's first field is its
   * partition's key in the sink); rows that are not UnsafeRows go through `toUnsafe`. A chunk
   * row stays valid until the next is asked for, `hasNext` included; `copies`: each is a copy
   * (for a shuffle that holds its records). Generated code calls a sink itself.
   */
  final class Chunker(
      pairs: Iterator[(Int, InternalRow)],
      sink: ChunkSink,
      toUnsafe: () => UnsafeProjection,
      copies: Boolean) extends Iterator[InternalRow] {

    private[this] lazy val unsafe = toUnsafe()
    private[this] var ready = false

    override def hasNext: Boolean = {
      if (!ready) ready = nextChunk()
      ready
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      ready = false
      if (copies) sink.chunk().copy() else sink.chunk()
    }

    private def nextChunk(): Boolean = {
      while (pairs.hasNext) {
        val (p, row) = pairs.next()
        val u = row match {
          case u: UnsafeRow => u
          case other => unsafe(other)
        }
        if (sink.add(p, u)) return true
      }
      sink.flushNext()
    }
  }

  /**
   * The rows of `chunks` (chunk rows, as [[Chunker]] makes them), one reused row of `width`
   * fields pointed at each in turn. Each chunk is copied out of its row into one of two buffers,
   * in turn: a shuffle reuses its row's bytes for the next chunk, and a row handed out stays
   * valid until the next is asked for, `hasNext` included (which reads the next chunk).
   */
  final class Unchunker(chunks: Iterator[InternalRow], width: Int) extends Iterator[InternalRow] {
    private[this] val out = new UnsafeRow(width)
    private[this] val buffers = Array(new Array[Byte](1 << 12), new Array[Byte](1 << 12))
    private[this] var current = 0
    private[this] var at = 0
    private[this] var end = 0

    override def hasNext: Boolean = {
      while (at >= end) {
        if (!chunks.hasNext) return false
        load(chunks.next())
      }
      true
    }

    private def load(chunk: InternalRow): Unit = {
      current = 1 - current
      val (base, offset, size) = chunk match {
        case u: UnsafeRow =>
          val offsetAndSize = u.getLong(1)
          (u.getBaseObject, u.getBaseOffset + (offsetAndSize >>> 32), offsetAndSize.toInt)
        case other =>
          val bytes = other.getBinary(1)
          (bytes, Platform.BYTE_ARRAY_OFFSET.toLong, bytes.length)
      }
      if (buffers(current).length < size) buffers(current) = new Array[Byte](math.max(size, buffers(current).length * 2))
      Platform.copyMemory(base, offset, buffers(current), Platform.BYTE_ARRAY_OFFSET, size)
      at = 0
      end = size
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      val buffer = buffers(current)
      val size = Platform.getLong(buffer, Platform.BYTE_ARRAY_OFFSET + at).toInt
      out.pointTo(buffer, Platform.BYTE_ARRAY_OFFSET + at + 8, size)
      at += 8 + size
      out
    }
  }
}
