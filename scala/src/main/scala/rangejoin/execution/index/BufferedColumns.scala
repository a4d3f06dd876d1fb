package rangejoin.execution.index

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator
import org.apache.spark.sql.types.DataType

/**
 * The buffered rows' fixed-width columns as primitive arrays, in buffer order: what the join's
 * generated code reads, where an output-heavy join emits many buffered rows per streamed row.
 * {{{
 *   rows      [ r0 ][ r1 ][ r2 ]         UnsafeRows: row -> bytes -> null bit, then the value
 *   values    [ v0 , v1 , v2 ]           long[] (int[], double[] ...): one load
 *   nulls     [ f  , t  , f  ]           boolean[]; null when no row's value is NULL
 * }}}
 * Reading a value from a row object is a chain of dependent loads (the row, its base and
 * offset, its null bits, the value); from an array it is one: W4 (250M rows out) ran 18% faster,
 * its inner join 35% (docs/design.md). Each column is built on its first use, once per JVM that
 * reads the broadcast, and kept with it: 1-8 bytes a row for each column the query reads, and one
 * more for a column with NULLs.
 */
private[rangejoin] final class BufferedColumns(rows: Array[InternalRow]) {

  private[this] val values = new ConcurrentHashMap[Integer, AnyRef]
  private[this] val nulls = new ConcurrentHashMap[Integer, Array[Boolean]]

  /**
   * Column `ordinal`'s values as an array of its Java type, `javaType` (long[] for a bigint or a
   * timestamp, int[] for an int or a date...: see [[BufferedColumns.supports]]). A NULL's slot
   * holds the type's default value.
   */
  def values(ordinal: Int, javaType: String): AnyRef =
    values.computeIfAbsent(ordinal, _ => BufferedColumns.read(rows, ordinal, javaType))

  /** Whether each row's column `ordinal` is NULL; null when no row's is. */
  def nulls(ordinal: Int): Array[Boolean] = {
    val isNull = nulls.computeIfAbsent(ordinal, _ => {
      val isNull = new Array[Boolean](rows.length)
      var any = false
      var i = 0
      while (i < rows.length) {
        isNull(i) = rows(i).isNullAt(ordinal)
        any |= isNull(i)
        i += 1
      }
      if (any) isNull else Array.emptyBooleanArray // the map holds no null
    })
    if (isNull.length == 0) null else isNull
  }
}

private[rangejoin] object BufferedColumns {

  /** The Java types whose values live in an UnsafeRow's fixed-width slot and read as primitives. */
  private val Primitives = Set("boolean", "byte", "short", "int", "long", "float", "double")

  def supports(dataType: DataType): Boolean = Primitives(CodeGenerator.javaType(dataType))

  private def read(rows: Array[InternalRow], ordinal: Int, javaType: String): AnyRef = {
    val n = rows.length
    def fill[@specialized A](array: Array[A], get: InternalRow => A): Array[A] = {
      var i = 0
      while (i < n) {
        if (!rows(i).isNullAt(ordinal)) array(i) = get(rows(i))
        i += 1
      }
      array
    }
    javaType match {
      case "boolean" => fill(new Array[Boolean](n), _.getBoolean(ordinal))
      case "byte" => fill(new Array[Byte](n), _.getByte(ordinal))
      case "short" => fill(new Array[Short](n), _.getShort(ordinal))
      case "int" => fill(new Array[Int](n), _.getInt(ordinal))
      case "long" => fill(new Array[Long](n), _.getLong(ordinal))
      case "float" => fill(new Array[Float](n), _.getFloat(ordinal))
      case "double" => fill(new Array[Double](n), _.getDouble(ordinal))
      case other => throw new IllegalArgumentException(s"no primitive array of $other")
    }
  }
}
