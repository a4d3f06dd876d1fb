package rangejoin.execution.broadcast

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.types.StructType

import rangejoin.condition.Extreme

/**
 * Finds the row with a side's [[Extreme]] key: the one buffered row of the existence fast path,
 * and the bound the side switch measures. Keys compare with Spark's own ordering for their type;
 * NULL keys are skipped, and with no key at all there is no row.
 */
private[rangejoin] object ExtremeRows {

  /** The row of `rows` with the extreme non-NULL `key` (bound to the rows), or None. */
  def of(extreme: Extreme, rows: Iterator[InternalRow], key: Expression): Option[InternalRow] = {
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
