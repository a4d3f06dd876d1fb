package rangejoin.execution

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow, UnsafeArrayData, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types.{ArrayType, BooleanType, DataType, IntegerType}

/**
 * The buffered side as it is broadcast. BroadcastExchangeExec ships an array of UnsafeRows and
 * nothing else, so the index travels as one extra row at the end:
 * {{{
 *   rows(0 until keyed)    rows whose key is not NULL, ascending by key
 *   rows(keyed until n)    rows whose key is NULL: they match nothing, outer joins still emit them
 *   rows(n)                trailer: (keys: the `keyed` sorted keys in KeyCodec's stored form,
 *                                    sorted: boolean,
 *                                    origins: each row's position before sorting)
 * }}}
 * The driver sorts once per broadcast ([[SortedBuffer.build]]); tasks read rows and keys in place,
 * with no per-task copy or sort.
 *
 * If the key expression raises an error on some row (an ANSI overflow, say), the rows keep their
 * original order and `sorted` is false. The join then evaluates its whole condition pair by pair,
 * as BroadcastNestedLoopJoin does, so the error surfaces exactly when stock Spark would raise it
 * (and not, for example, when the other side is empty).
 */
final class SortedBuffer(payload: Array[InternalRow]) {

  /** Buffered rows, not counting the trailer. */
  val numRows: Int = payload.length - 1

  private val trailer = payload(numRows)

  /** False when a key failed to evaluate; see the class comment. */
  val isSorted: Boolean = trailer.getBoolean(1)

  def row(i: Int): InternalRow = payload(i)

  private val origins = trailer.getArray(2)

  /** Where row i was before sorting: its position in stock Spark's broadcast. */
  def origin(i: Int): Int = if (isSorted) origins.getInt(i) else i

  /** The sorted non-NULL keys; their count is the number of rows with a key. */
  def storedKeys: ArrayData = trailer.getArray(0)
}

object SortedBuffer {

  /** Sorts `rows` by `key` (bound to the rows) into the broadcast payload described above. */
  def build(rows: Array[InternalRow], key: Expression): Array[InternalRow] = {
    val codec = KeyCodec(key.dataType)
    val keys = codec.newColumn(rows.length)
    val evaluated = try {
      val keyOf = UnsafeProjection.create(Seq(key))
      var i = 0
      while (i < rows.length) {
        keys.set(i, keyOf(rows(i)))
        i += 1
      }
      true
    } catch {
      case NonFatal(_) => false // raised again, where Spark would raise it, by the pairwise join
    }
    if (!evaluated) {
      return rows :+ trailer(codec.storedType, codec.newColumn(0).stored(Array()), false, Array())
    }
    val (keyed, nullKeyed) = rows.indices.toArray.partition(i => !keys.isNull(i))
    IndexSort.sort(keyed, keys)
    val order = keyed ++ nullKeyed
    order.map(rows) :+ trailer(codec.storedType, keys.stored(keyed), true, order)
  }

  private def trailer(
      storedType: DataType,
      keys: ArrayData,
      sorted: Boolean,
      origins: Array[Int]): InternalRow = {
    val toUnsafe = UnsafeProjection.create(
      Array[DataType](ArrayType(storedType, false), BooleanType, ArrayType(IntegerType, false)))
    toUnsafe(new GenericInternalRow(
      Array[Any](keys, sorted, UnsafeArrayData.fromPrimitiveArray(origins)))).copy()
  }
}
