package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

import rangejoin.shims.{FeatureShims, SessionShims}

/**
 * The key types rangejoin handles, and how: every question about a key's type is answered here,
 * once, so that the planner's choices and the execution's representations cannot disagree.
 * {{{
 *   sortable        a range join can drive on it        numbers, decimals, dates, timestamps,
 *                                                       times, intervals, booleans, strings, binary
 *   orderedAsLong   stored as a long in Spark's order   the above but strings, binary, wide decimals
 *   integral        compares as a long's value itself   tinyint .. bigint, date, timestamp(_ntz):
 *                                                       bins, and one-column equality keys as longs
 *   groupable       grouping agrees with = and <=>,     numbers, strings, booleans, dates,
 *                   max/min with < and >                timestamps, binary (keyed existence)
 *   identity        equal values behave alike in any    integral, binary, decimals, binary-collated
 *                   condition                           strings (bins' unmatched outer rows)
 * }}}
 */
private[rangejoin] object KeyTypes {

  def sortable(keyType: DataType): Boolean = keyType match {
    case _: StringType | BinaryType | _: DecimalType => true
    case other => orderedAsLong(other)
  }

  def orderedAsLong(keyType: DataType): Boolean = longEncoder(keyType).isDefined

  def integral(keyType: DataType): Boolean = keyType match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  def groupable(keyType: DataType): Boolean = keyType match {
    case _: NumericType | _: StringType | BooleanType | DateType | TimestampType |
         TimestampNTZType | BinaryType => true
    case _ => false
  }

  def identity(keyType: DataType): Boolean = keyType match {
    case BooleanType | BinaryType | _: DecimalType => true
    case s: StringType => SessionShims.isBinaryString(s)
    case other => integral(other)
  }

  /**
   * Whether a key of this type is its own value as a long (read with getLong): sorted keys of it
   * are then the column's values themselves.
   */
  def ownLong(keyType: DataType): Boolean = keyType match {
    case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType => true
    case t => FeatureShims.isTimeType(t)
  }

  /**
   * Whether a key of this type is its own value as an int (read with getInt), widened to a long:
   * sorted keys of it, narrowed back, are the column's values.
   */
  def ownInt(keyType: DataType): Boolean = keyType == IntegerType || keyType == DateType

  /**
   * Reads a key of this type as a long that orders exactly as Spark orders the key, for the types
   * whose order is a long's.
   */
  def longEncoder(keyType: DataType): Option[LongEncoder] = keyType match {
    case BooleanType => Some((r, i) => if (r.getBoolean(i)) 1L else 0L)
    case ByteType => Some((r, i) => r.getByte(i).toLong)
    case ShortType => Some((r, i) => r.getShort(i).toLong)
    case IntegerType | DateType | _: YearMonthIntervalType => Some((r, i) => r.getInt(i).toLong)
    case t if ownLong(t) => Some((r, i) => r.getLong(i))
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
 * Reads field `ordinal` of a row as a long that orders as the key does ([[KeyTypes.longEncoder]]).
 * Not a `(SpecializedGetters, Int) => Long`: Function2 is not specialized for an object argument,
 * so each call would box the ordinal and the long, once per streamed row of every search.
 */
private[rangejoin] trait LongEncoder extends Serializable {
  def apply(row: SpecializedGetters, ordinal: Int): Long
}
