package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData}
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData, TypeUtils}
import org.apache.spark.sql.types._

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

  /** The element type of the sorted key array in the broadcast trailer. */
  def storedType: DataType

  /** A column of `n` keys, filled at the driver to sort the buffered side. */
  private[execution] def newColumn(n: Int): KeyColumn

  /** A search over the stored keys of a broadcast trailer. */
  def sortedKeys(stored: ArrayData): SortedKeys
}

private[rangejoin] object KeyCodec {

  def apply(keyType: DataType): KeyCodec =
    longEncoder(keyType).map(LongCodec(keyType, _)).getOrElse(OrderedCodec(keyType))

  /** Whether rangejoin can drive a join on keys of this type. */
  def supports(keyType: DataType): Boolean = keyType match {
    case _: StringType | BinaryType | _: DecimalType => true
    case other => longEncoder(other).isDefined
  }

  /**
   * Reads a key of this type as a long that orders exactly as Spark orders the key, for the types
   * whose order is a long's.
   */
  def longEncoder(keyType: DataType): Option[LongEncoder] = keyType match {
    case BooleanType => Some((r, i) => if (r.getBoolean(i)) 1L else 0L)
    case ByteType => Some((r, i) => r.getByte(i).toLong)
    case ShortType => Some((r, i) => r.getShort(i).toLong)
    case IntegerType | DateType | _: YearMonthIntervalType => Some((r, i) => r.getInt(i).toLong)
    case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType | _: TimeType =>
      Some((r, i) => r.getLong(i))
    case FloatType => Some((r, i) => sortableDouble(r.getFloat(i).toDouble))
    case DoubleType => Some((r, i) => sortableDouble(r.getDouble(i)))
    case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS =>
      // Both operands of a comparison have the same type, hence the same scale.
      Some((r, i) => r.getDecimal(i, d.precision, d.scale).toUnscaledLong)
    case _ => None
  }

  /**
   * A long that orders as Spark orders doubles (SQLOrderingUtil.compareDoubles): -0.0 is folded
   * into 0.0, every NaN into the canonical NaN (doubleToLongBits does that), and the bits of
   * negative numbers are flipped so that signed long order is numeric order, with NaN on top.
   */
  def sortableDouble(d: Double): Long = {
    val bits = java.lang.Double.doubleToLongBits(if (d == 0.0d) 0.0d else d)
    bits ^ ((bits >> 63) & Long.MaxValue)
  }
}

/**
 * Reads field `ordinal` of a row as a long that orders as the key does ([[KeyCodec.longEncoder]]).
 * Not a `(SpecializedGetters, Int) => Long`: Function2 is not specialized for an object argument,
 * so each call would box the ordinal and the long, once per streamed row of every search.
 */
private[rangejoin] trait LongEncoder extends Serializable {
  def apply(row: SpecializedGetters, ordinal: Int): Long
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
    def stored(order: Array[Int]): ArrayData = {
      val sorted = new Array[Long](order.length) // written out: ArrayOps.map boxes each key
      var i = 0
      while (i < order.length) {
        sorted(i) = values(order(i))
        i += 1
      }
      UnsafeArrayData.fromPrimitiveArray(sorted)
    }
  }

  override def sortedKeys(stored: ArrayData): SortedKeys = new LongKeys(stored, encode)
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
    def stored(order: Array[Int]): ArrayData = new GenericArrayData(order.map(values))
  }

  override def sortedKeys(stored: ArrayData): SortedKeys = new OrderedKeys(stored, read, ordering)
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
  def stored(order: Array[Int]): ArrayData
}
