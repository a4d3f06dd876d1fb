package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData, TypeUtils}
import org.apache.spark.sql.types._

import rangejoin.condition.{KeyTypes, LongEncoder}
/**
 * How join keys of one data type are stored in the sorted index and compared.
 *
 * Every comparison here must agree with the one Spark evaluates for `<`, `<=`, `>`, `>=` (the
 * interpreted `TypeUtils.getInterpretedOrdering` and the generated code share its rules): NaN
 * equals NaN and is above every other value, -0.0 equals 0.0, strings compare under their
 * collation. Types whose order is that of a long (integers, booleans, dates, timestamps, times,
 * intervals, decimals of up to 18 digits, and floating point once NaN and -0.0 are folded) are
 * stored as order-preserving longs; the others keep their value and use Spark's interpreted
 * ordering for their type, so they agree with Spark by construction.
 */
private[rangejoin] sealed abstract class KeyCodec extends Serializable {

  def keyType: DataType

  /** The element type of the sorted keys as stored ([[StoredKeys]]). */
  def storedType: DataType

  /** A column of `n` keys, filled at the driver to sort the buffered side. */
  private[execution] def newColumn(n: Int): KeyColumn

  /** A search over a buffer's sorted keys. */
  def sortedKeys(buffer: SortedBuffer): SortedKeys
}

private[rangejoin] object KeyCodec {

  def apply(keyType: DataType): KeyCodec =
    KeyTypes.longEncoder(keyType).map(LongCodec(keyType, _)).getOrElse(OrderedCodec(keyType))
}

/** Keys whose order is a long's, stored as those longs. */
private[rangejoin] final case class LongCodec(keyType: DataType, encode: LongEncoder)
  extends KeyCodec {

  override def storedType: DataType = LongType

  override private[execution] def newColumn(n: Int): KeyColumn = new KeyColumn {
    private val values = new Array[Long](n)
    private val nulls = new java.util.BitSet(n)
    def set(i: Int, keyRow: InternalRow): Unit =
      if (keyRow.isNullAt(0)) nulls.set(i) else values(i) = encode(keyRow, 0)
    def isNull(i: Int): Boolean = nulls.get(i)
    def compare(i: Int, j: Int): Int = java.lang.Long.compare(values(i), values(j))
    override def sort(indices: Array[Int]): Unit = IndexSort.sortLongs(indices, values)
    def stored(order: Array[Int]): StoredKeys = {
      val sorted = new Array[Long](order.length) // written out: ArrayOps.map boxes each key
      var i = 0
      while (i < order.length) {
        sorted(i) = values(order(i))
        i += 1
      }
      new PackedLongs(sorted)
    }
  }

  override def sortedKeys(buffer: SortedBuffer): SortedKeys = new LongKeys(buffer.longKeys, encode)
}

/** Keys stored as their values and compared with Spark's interpreted ordering for the type. */
private[rangejoin] final case class OrderedCodec(keyType: DataType) extends KeyCodec {

  override def storedType: DataType = keyType

  @transient private lazy val ordering: Ordering[Any] = TypeUtils.getInterpretedOrdering(keyType)
  @transient private lazy val read = InternalRow.getAccessor(keyType)

  override private[execution] def newColumn(n: Int): KeyColumn = new KeyColumn {
    private val values = new Array[Any](n)
    // The key row is reused from row to row: keep a copy of each value.
    def set(i: Int, keyRow: InternalRow): Unit =
      values(i) = if (keyRow.isNullAt(0)) null else InternalRow.copyValue(read(keyRow, 0))
    def isNull(i: Int): Boolean = values(i) == null
    def compare(i: Int, j: Int): Int = ordering.compare(values(i), values(j))
    def stored(order: Array[Int]): StoredKeys = new OrderedStoredKeys(new GenericArrayData(order.map(values)))
  }

  override def sortedKeys(buffer: SortedBuffer): SortedKeys = new OrderedKeys(buffer.orderedKeys, read, ordering)
}

/** The keys of the buffered rows while the driver sorts them. */
private[execution] trait KeyColumn {
  /** Records the key of row i, read from field 0 of `keyRow` (NULL included). */
  def set(i: Int, keyRow: InternalRow): Unit
  def isNull(i: Int): Boolean
  /** The sign of comparing the (non-NULL) keys of rows i and j. */
  def compare(i: Int, j: Int): Int
  /** Sorts row indices (of non-NULL keys) by key, stably: ties keep their order in `indices`. */
  def sort(indices: Array[Int]): Unit = IndexSort.sort(indices, this)
  /** The keys of the rows `order`, in that order, as the stored array. */
  def stored(order: Array[Int]): StoredKeys
}

/**
 * A buffer's sorted keys in their stored form: order-preserving longs ([[PackedLongs]], read in
 * place as a plain array and packed as they travel), or the values themselves.
 */
private[rangejoin] trait StoredKeys extends Serializable {
  def size: Int

  /** The keys as longs: only for keys stored as longs. */
  def longs: Array[Long]
}

/** Keys stored as their values (an [[OrderedCodec]]'s). */
private[rangejoin] final class OrderedStoredKeys(val values: ArrayData) extends StoredKeys {
  override def size: Int = values.numElements()

  override def longs: Array[Long] =
    throw new IllegalStateException("keys stored as their values are not longs")
}
