package rangejoin.execution.index

import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** The broadcast payload's own serialization: every row back, bytes and field counts intact. */
class BroadcastRowsSuite extends AnyFunSuite {

  private def rows(n: Int): Array[InternalRow] = {
    val wide = UnsafeProjection.create(Array[DataType](LongType, StringType))
    val narrow = UnsafeProjection.create(Array[DataType](IntegerType))
    val body = (0 until n).map { i =>
      val s = if (i % 3 == 0) null else UTF8String.fromString("x" * (i % 200))
      wide(new GenericInternalRow(Array[Any](i.toLong, s))).copy(): InternalRow
    }
    (body :+ narrow(new GenericInternalRow(Array[Any](n))).copy()).toArray
  }

  for ((name, serializer) <- Seq(
      "Java" -> new JavaSerializer(new SparkConf()),
      "Kryo" -> new KryoSerializer(new SparkConf()))) {
    for (n <- Seq(0, 1, 1000, 70000)) {
      test(s"$name serialization returns every row unchanged ($n rows and a trailer)") {
        val original = rows(n)
        val instance = serializer.newInstance()
        val back = instance.deserialize[BroadcastRows](instance.serialize(new BroadcastRows(original)))
        assert(back.rows.length == original.length)
        assert(back.rows.toSeq == original.toSeq) // UnsafeRow equality: same bytes
        assert(back.rows.map(_.numFields).toSeq == original.map(_.numFields).toSeq)
      }
    }

    test(s"$name serialization: rows larger than the copy buffer and a read block, and rows of no fields, among small ones") {
      val wide = UnsafeProjection.create(Array[DataType](LongType, StringType))
      val empty = UnsafeProjection.create(Array[DataType]())
      val original = (0 until 50).map { i =>
        if (i % 7 == 3) empty(new GenericInternalRow(Array[Any]())).copy(): InternalRow
        else {
          val length = if (i % 10 == 0) 600000 + i else i // larger than the 64 KB copy buffer and a 256 KB read block
          wide(new GenericInternalRow(Array[Any](i.toLong, UTF8String.fromString("y" * length)))).copy(): InternalRow
        }
      }.toArray
      val instance = serializer.newInstance()
      val back = instance.deserialize[BroadcastRows](instance.serialize(new BroadcastRows(original)))
      assert(back.rows.toSeq == original.toSeq)
      assert(back.rows.map(_.numFields).toSeq == original.map(_.numFields).toSeq)
    }
  }
}
