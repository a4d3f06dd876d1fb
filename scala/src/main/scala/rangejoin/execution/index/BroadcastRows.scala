package rangejoin.execution.index

import java.io.{DataInput, DataOutput, Externalizable, ObjectInput, ObjectOutput}

import com.esotericsoftware.kryo.{Kryo, KryoSerializable}
import com.esotericsoftware.kryo.io.{Input, Output}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.rangejoin.KnownSize
import org.apache.spark.unsafe.Platform

/**
 * The sorted broadcast's rows (in a [[SortedBuffer]], all UnsafeRows) as they travel. Left
 * to Spark's serializers, an array of rows is written object by object, each with its own
 * header and back-reference entry, which costs more than the sort. Here they are written as one
 * stream of (field count, size, bytes) records, and read back into rows over one byte array.
 */
private[rangejoin] final class BroadcastRows(private var data: Array[InternalRow])
  extends BufferRows with Externalizable with KryoSerializable with KnownSize {

  def this() = this(null) // for deserialization

  override def rows: Array[InternalRow] = data

  override def numRows: Int = data.length

  override def copyOf(i: Int): InternalRow = data(i).copy()

  /**
   * The rows' bytes, plus a row object and a reference each: exact for packed rows, and a few
   * bytes under for rows with an array each (an array header more).
   */
  override def estimatedSize: Long = {
    var bytes = 16L + 4L * data.length
    var i = 0
    while (i < data.length) {
      bytes += data(i).asInstanceOf[UnsafeRow].getSizeInBytes + BroadcastRows.RowObjectSize
      i += 1
    }
    bytes
  }

  override def writeExternal(out: ObjectOutput): Unit = write(out)

  override def readExternal(in: ObjectInput): Unit = read(in)

  override def write(kryo: Kryo, out: Output): Unit = write(new KryoDataOutput(out))

  override def read(kryo: Kryo, in: Input): Unit = read(new KryoDataInput(in))

  // The stream: the row count; each row's field count and size (big-endian ints, as
  // DataOutput.writeInt writes them); then every row's bytes. Both directions move whole
  // buffers, not rows: a call into an ObjectOutputStream per row cost more than the copy.

  private def write(out: DataOutput): Unit = {
    out.writeInt(data.length)
    val buffer = new Array[Byte](BroadcastRows.BufferSize)
    var used = 0
    var i = 0
    while (i < data.length) {
      if (used + 8 > buffer.length) {
        out.write(buffer, 0, used)
        used = 0
      }
      val row = data(i).asInstanceOf[UnsafeRow]
      BroadcastRows.putInt(buffer, used, row.numFields)
      BroadcastRows.putInt(buffer, used + 4, row.getSizeInBytes)
      used += 8
      i += 1
    }
    i = 0
    while (i < data.length) {
      val row = data(i).asInstanceOf[UnsafeRow]
      val size = row.getSizeInBytes
      var done = 0
      while (done < size) {
        if (used == buffer.length) {
          out.write(buffer, 0, used)
          used = 0
        }
        val n = math.min(buffer.length - used, size - done)
        Platform.copyMemory(row.getBaseObject, row.getBaseOffset + done, buffer,
          Platform.BYTE_ARRAY_OFFSET + used, n)
        used += n
        done += n
      }
      i += 1
    }
    if (used > 0) out.write(buffer, 0, used)
  }

  private def read(in: DataInput): Unit = {
    val n = in.readInt()
    val fields = new Array[Int](n)
    val sizes = new Array[Int](n)
    BroadcastRows.readEights(in, n) { (i, buffer, at) =>
      fields(i) = BroadcastRows.getInt(buffer, at)
      sizes(i) = BroadcastRows.getInt(buffer, at + 4)
    }
    var remaining = 0L
    var i = 0
    while (i < n) {
      remaining += sizes(i)
      i += 1
    }
    // Rows packed into arrays of ChunkSize; a row never spans two. Each array is read whole.
    data = new Array[InternalRow](n)
    i = 0
    while (i < n) {
      val block = new Array[Byte](math.max(sizes(i).toLong, math.min(remaining, BroadcastRows.ChunkSize.toLong)).toInt)
      var end = i
      var bytes = 0L
      while (end < n && bytes + sizes(end) <= block.length) {
        bytes += sizes(end)
        end += 1
      }
      in.readFully(block, 0, bytes.toInt)
      remaining -= bytes
      var offset = 0
      while (i < end) {
        val row = new UnsafeRow(fields(i))
        row.pointTo(block, Platform.BYTE_ARRAY_OFFSET + offset, sizes(i))
        data(i) = row
        offset += sizes(i)
        i += 1
      }
    }
  }
}

private[index] object BroadcastRows {
  val BufferSize: Int = 64 * 1024

  /** An UnsafeRow object (header, base object, offset, field count, size, width) on a 64-bit JVM. */
  val RowObjectSize: Int = 40

  /**
   * The size of the arrays a deserialized payload's rows are packed into: with its header, well
   * below G1's humongous-object threshold (half a region; regions are 1 MB at the smallest), so
   * the arrays are allocated and collected as ordinary young objects, where a humongous one
   * starts a collection. (A 512 KB array is humongous in 1 MB regions: the header tips it over.)
   */
  val ChunkSize: Int = 256 * 1024

  def putInt(buffer: Array[Byte], at: Int, v: Int): Unit = {
    buffer(at) = (v >>> 24).toByte
    buffer(at + 1) = (v >>> 16).toByte
    buffer(at + 2) = (v >>> 8).toByte
    buffer(at + 3) = v.toByte
  }

  def getInt(buffer: Array[Byte], at: Int): Int =
    (buffer(at) & 0xff) << 24 | (buffer(at + 1) & 0xff) << 16 | (buffer(at + 2) & 0xff) << 8 | (buffer(at + 3) & 0xff)

  /**
   * Reads `n` records of 8 bytes from `in`, a buffer at a time (a call into the stream per
   * record cost more than the decoding), and hands each to `record` as (its index, the buffer,
   * its offset there).
   */
  def readEights(in: DataInput, n: Int)(record: EightBytes): Unit = {
    val buffer = new Array[Byte](BufferSize)
    var i = 0
    while (i < n) {
      val count = math.min(n - i, buffer.length / 8)
      in.readFully(buffer, 0, 8 * count)
      var k = 0
      while (k < count) {
        record(i + k, buffer, 8 * k)
        k += 1
      }
      i += count
    }
  }
}

/** What to do with one record of [[BroadcastRows.readEights]]: a trait, not a Function3, which would box the ints. */
private[index] trait EightBytes {
  def apply(i: Int, buffer: Array[Byte], at: Int): Unit
}

/** Kryo's streams seen as java.io's data streams, so one codec serves both serializers. */
private final class KryoDataOutput(out: Output) extends java.io.DataOutputStream(out)

private final class KryoDataInput(in: Input) extends java.io.DataInputStream(in)
