package rangejoin.execution.index

import java.io.{DataInput, DataOutput, Externalizable, ObjectInput, ObjectOutput}

import com.esotericsoftware.kryo.{Kryo, KryoSerializable}
import com.esotericsoftware.kryo.io.{Input, Output}

/**
 * An array of longs that travels packed: each value as the difference from the one before it,
 * zigzag-folded and written in as few 7-bit groups as it needs (a varint), or as 8 plain bytes
 * each where that is shorter. The broadcast's sorted keys are its main use: consecutive sorted
 * keys are close, so most take one or two bytes where Spark's serializers write eight, and LZ4
 * (the broadcast's compression) cannot shrink eight bytes of a sorted key much.
 * {{{
 *   values     1000  1003  1003  1100  -5
 *   deltas     1000     3     0    97  -1105      (from 0, then each from the one before)
 *   zigzag     2000     6     0   194   2209      (0, -1, 1, -2, ... as 0, 1, 2, 3, ...)
 *   bytes         2     1     1     2      2
 * }}}
 * The differences wrap around as longs do, and so do the sums that undo them: any values, in any
 * order, read back exactly. The form is chosen per array, so it never travels larger than plain.
 * In memory it is a plain array, read in place.
 */
private[rangejoin] final class PackedLongs(private var data: Array[Long])
  extends StoredKeys with Externalizable with KryoSerializable {

  def this() = this(null) // for deserialization

  override def longs: Array[Long] = data

  override def size: Int = data.length

  override def writeExternal(out: ObjectOutput): Unit = PackedLongs.write(out, data)

  override def readExternal(in: ObjectInput): Unit = data = PackedLongs.read(in)

  override def write(kryo: Kryo, out: Output): Unit = PackedLongs.write(new KryoDataOutput(out), data)

  override def read(kryo: Kryo, in: Input): Unit = data = PackedLongs.read(new KryoDataInput(in))
}

private[index] object PackedLongs {

  private val Plain: Byte = 0
  private val Varint: Byte = 1

  private def zigzag(delta: Long): Long = (delta << 1) ^ (delta >> 63)

  private def unzigzag(z: Long): Long = (z >>> 1) ^ -(z & 1)

  /** The bytes a varint of `z` takes: one per 7 significant bits, at least one. */
  private def varintSize(z: Long): Int = math.max(1, (70 - java.lang.Long.numberOfLeadingZeros(z)) / 7)

  /** The varints' total size, or -1 once it passes 8 bytes a value (plain is then shorter). */
  private def packedSize(values: Array[Long]): Long = {
    val plain = 8L * values.length
    var bytes = 0L
    var previous = 0L
    var i = 0
    while (i < values.length) {
      bytes += varintSize(zigzag(values(i) - previous))
      previous = values(i)
      i += 1
    }
    if (bytes < plain) bytes else -1L
  }

  // The stream: the count, the form, then for varints their total size and the bytes, for the
  // plain form 8 big-endian bytes a value. Both directions move whole buffers, as BroadcastRows
  // does: a call into the stream per value cost more than the encoding.

  def write(out: DataOutput, values: Array[Long]): Unit = {
    out.writeInt(values.length)
    val packed = packedSize(values)
    out.writeByte(if (packed < 0) Plain else Varint)
    if (packed >= 0) out.writeLong(packed)
    val buffer = new Array[Byte](BroadcastRows.BufferSize)
    var used = 0
    var previous = 0L
    var i = 0
    while (i < values.length) {
      if (used + 10 > buffer.length) {
        out.write(buffer, 0, used)
        used = 0
      }
      if (packed < 0) {
        putLong(buffer, used, values(i))
        used += 8
      } else {
        var z = zigzag(values(i) - previous)
        previous = values(i)
        while ((z & ~0x7fL) != 0) {
          buffer(used) = ((z & 0x7f) | 0x80).toByte
          used += 1
          z >>>= 7
        }
        buffer(used) = z.toByte
        used += 1
      }
      i += 1
    }
    if (used > 0) out.write(buffer, 0, used)
  }

  def read(in: DataInput): Array[Long] = {
    val n = in.readInt()
    val form = in.readByte()
    require(form == Plain || form == Varint, s"not a packed array of longs (form $form)")
    val values = new Array[Long](n)
    if (form == Plain) BroadcastRows.readEights(in, n)((i, buffer, at) => values(i) = getLong(buffer, at))
    else {
      val buffer = new Array[Byte](BroadcastRows.BufferSize)
      var unread = in.readLong() // bytes still in the stream
      var end = 0 // bytes in the buffer
      var at = 0
      var previous = 0L
      var i = 0
      while (i < n) {
        // Refill before a varint that may run past the buffer's end (a varint is at most 10 bytes).
        if (end - at < 10 && unread > 0) {
          System.arraycopy(buffer, at, buffer, 0, end - at)
          end -= at
          at = 0
          val count = math.min(unread, (buffer.length - end).toLong).toInt
          in.readFully(buffer, end, count)
          end += count
          unread -= count
        }
        var z = 0L
        var shift = 0
        var b = 0
        do {
          if (at >= end) throw new java.io.EOFException("a packed array of longs ends inside a value")
          b = buffer(at)
          at += 1
          z |= (b & 0x7fL) << shift
          shift += 7
        } while ((b & 0x80) != 0)
        previous += unzigzag(z)
        values(i) = previous
        i += 1
      }
      if (at != end || unread != 0) throw new java.io.IOException("a packed array of longs has bytes left over")
    }
    values
  }

  private def putLong(buffer: Array[Byte], at: Int, v: Long): Unit = {
    BroadcastRows.putInt(buffer, at, (v >>> 32).toInt)
    BroadcastRows.putInt(buffer, at + 4, v.toInt)
  }

  private def getLong(buffer: Array[Byte], at: Int): Long =
    (BroadcastRows.getInt(buffer, at).toLong << 32) | (BroadcastRows.getInt(buffer, at + 4) & 0xffffffffL)
}
