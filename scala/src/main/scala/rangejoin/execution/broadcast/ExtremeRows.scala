package rangejoin.execution.broadcast

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.types.StructType

import rangejoin.condition.{Extreme, KeyTypes, LongEncoder}

/**
 * Finds the row with a side's [[Extreme]] key: the one buffered row of the existence fast path,
 * and the bound the side switch measures. Keys compare with Spark's own ordering for their type;
 * NULL keys are skipped, and with no key at all there is no row.
 */
private[rangejoin] object ExtremeRows {

  /** The row of `rows` with the extreme non-NULL `key` (bound to the rows), or None. */
  def of(extreme: Extreme, rows: Iterator[InternalRow], key: Expression): Option[InternalRow] = key match {
    case BoundReference(ordinal, dataType, _) =>
      KeyTypes.longEncoder(dataType).fold(ofAny(extreme, rows, key))(ofLongs(extreme, rows, ordinal, _))
    case _ => ofAny(extreme, rows, key)
  }

  /**
   * A column whose type orders as a long ([[KeyTypes.longEncoder]]: Spark's order, NaN and -0.0
   * included), read in place: the general path projects, boxes and compares each key through an
   * ordering, several times the cost of the read over a side of millions of rows.
   */
  private def ofLongs(extreme: Extreme, rows: Iterator[InternalRow], ordinal: Int, read: LongEncoder)
      : Option[InternalRow] = {
    val max = extreme == Extreme.Max
    var best: InternalRow = null
    var bestKey = 0L
    while (rows.hasNext) {
      val row = rows.next()
      if (!row.isNullAt(ordinal)) {
        val k = read(row, ordinal)
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
