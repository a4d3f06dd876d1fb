package rangejoin.execution.broadcast

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.types._

import rangejoin.condition.Extreme

/**
 * Finds the row with a side's [[Extreme]] key: the one buffered row of the existence fast path,
 * and the bound the side switch measures. Keys compare with Spark's own ordering for their type;
 * NULL keys are skipped, and with no key at all there is no row.
 */
private[rangejoin] object ExtremeRows {

  /** The row of `rows` with the extreme non-NULL `key` (bound to the rows), or None. */
  def of(extreme: Extreme, rows: Iterator[InternalRow], key: Expression): Option[InternalRow] = key match {
    case BoundReference(i, LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType, _) =>
      ofLongs(extreme, rows, i, _.getLong(i))
    case BoundReference(i, IntegerType | DateType | _: YearMonthIntervalType, _) =>
      ofLongs(extreme, rows, i, _.getInt(i).toLong)
    case BoundReference(i, ShortType, _) => ofLongs(extreme, rows, i, _.getShort(i).toLong)
    case BoundReference(i, ByteType, _) => ofLongs(extreme, rows, i, _.getByte(i).toLong)
    case _ => ofAny(extreme, rows, key)
  }

  /**
   * A column whose values are integers, compared as longs (Spark's ordering for these types),
   * read in place: the general path projects, boxes and compares each key through an ordering,
   * several times the cost of the read over a side of millions of rows.
   */
  private def ofLongs(extreme: Extreme, rows: Iterator[InternalRow], ordinal: Int, read: InternalRow => Long)
      : Option[InternalRow] = {
    val max = extreme == Extreme.Max
    var best: InternalRow = null
    var bestKey = 0L
    while (rows.hasNext) {
      val row = rows.next()
      if (!row.isNullAt(ordinal)) {
        val k = read(row)
        if (best == null || (if (max) k > bestKey else k < bestKey)) {
          best = row.copy()
          bestKey = k
        }
      }
    }
    Option(best)
  }

  /** Any key, through Spark's ordering for its type. */
  private[broadcast] def ofAny(extreme: Extreme, rows: Iterator[InternalRow], key: Expression): Option[InternalRow] = {
    val keyOf = UnsafeProjection.create(Seq(key))
    val ordering = PhysicalDataType.ordering(key.dataType)
    var best: InternalRow = null
    var bestKey: Any = null
    rows.foreach { row =>
      val k = keyOf(row)
      if (!k.isNullAt(0)) {
        val value = k.get(0, key.dataType)
        if (best == null || extreme.better(ordering.compare(value, bestKey))) {
          best = row.copy()
          bestKey = InternalRow.copyValue(value) // the projection's buffer is reused
        }
      }
    }
    Option(best)
  }

  /**
   * The row with the extreme non-NULL `key` among every partition of `rows` (of `schema`), and
   * how many rows they hold: one candidate per partition, found where the rows are and made
   * unsafe to travel to the driver, which picks among them.
   */
  def across(extreme: Extreme, rows: RDD[InternalRow], key: Expression, schema: StructType): (Long, Option[InternalRow]) = {
    val perPartition = rows.mapPartitions { partition =>
      var n = 0L
      val counted = partition.map { row => n += 1; row }
      val best = of(extreme, counted, key).map(UnsafeProjection.create(schema)(_).copy())
      Iterator.single((n, best))
    }.collect()
    (perPartition.iterator.map(_._1).sum, of(extreme, perPartition.iterator.flatMap(_._2), key))
  }
}
