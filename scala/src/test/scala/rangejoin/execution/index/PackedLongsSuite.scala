package rangejoin.execution.index

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.util.Random

import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines

/** Packed arrays of longs read back exactly, in either form, and never travel larger than plain. */
class PackedLongsSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val random = new Random(20261129L)

  private def sortedClose(n: Int): Array[Long] = Array.fill(n)(random.nextInt(200).toLong).scanLeft(-1000L)(_ + _).tail

  private val arrays: Seq[(String, Array[Long])] = Seq(
    "empty" -> Array[Long](),
    "one zero" -> Array(0L),
    "the extremes, in every order (differences that wrap around)" ->
      Array(Long.MinValue, Long.MaxValue, Long.MinValue, 0L, -1L, Long.MaxValue, Long.MaxValue, 1L, Long.MinValue),
    "sorted and close, across the copy buffer's end" -> sortedClose(200000),
    "sorted within segments (a per-key index): drops between them" ->
      (sortedClose(5000) ++ sortedClose(7000) ++ Array(-5L) ++ sortedClose(3)),
    "random longs (plain is shorter)" -> Array.fill(30000)(random.nextLong()),
    "random, one byte past a varint's 7 bits" -> Array.fill(30000)(random.nextInt(256).toLong - 128))

  private def packedBytes(values: Array[Long]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    PackedLongs.write(out, values)
    out.close()
    bytes.toByteArray
  }

  for ((name, values) <- arrays) {
    test(s"$name: read back exactly, through the stream and both of Spark's serializers") {
      val packed = packedBytes(values)
      assert(PackedLongs.read(new DataInputStream(new ByteArrayInputStream(packed))).toSeq == values.toSeq)
      for (serializer <- Seq(new JavaSerializer(new SparkConf()), new KryoSerializer(new SparkConf()))) {
        val instance = serializer.newInstance()
        val back = instance.deserialize[PackedLongs](instance.serialize(new PackedLongs(values)))
        assert(back.longs.toSeq == values.toSeq, serializer.getClass.getSimpleName)
      }
      // The count, the form, the varints' size: at most 13 bytes beside 8 a value.
      assert(packed.length <= 13 + 8L * values.length)
    }
  }

  test("sorted keys a few apart take a byte or two each; random ones travel plain") {
    assert(packedBytes(sortedClose(100000)).length < 2 * 100000)
    assert(packedBytes(Array.fill(1000)(random.nextLong())).length == 5 + 8 * 1000)
  }

  test("a stream cut short or with bytes left over is an error, not other keys") {
    val packed = packedBytes(sortedClose(1000))
    intercept[java.io.IOException](PackedLongs.read(new DataInputStream(new ByteArrayInputStream(packed.dropRight(1)))))
    // The varints' size (after the count and the form) says one byte more than the values take.
    val longer = java.nio.ByteBuffer.wrap(packed :+ 0.toByte)
    longer.putLong(5, longer.getLong(5) + 1)
    intercept[java.io.IOException](PackedLongs.read(new DataInputStream(new ByteArrayInputStream(longer.array()))))
  }
}
