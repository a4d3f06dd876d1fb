package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.types.StructType

import rangejoin.execution.index.RangeOp

/**
 * The one buffered row a semi, anti or existence join with no residual needs: the one with the
 * largest key (for `streamed < buffered` and `<=`) or the smallest (`>`, `>=`). Some buffered
 * row satisfies `s < b` exactly when `s < max(b)`, so a streamed row is decided by that one key:
 * {{{
 *   buffered keys   1  3  3  5  8  NULL      s < b   <=>   s < 8
 *                                            s > b   <=>   s > 1
 * }}}
 * Keys are compared with Spark's own ordering for their type (NaN above every number, -0.0
 * equal to 0.0, collations), the ordering its comparison operators use. NULL keys never match,
 * so they are skipped; with no key at all the buffer is empty and nothing matches.
 */
private[rangejoin] sealed abstract class Extreme(val name: String) extends Serializable {

  protected def better(comparison: Int): Boolean

  /** The row of `rows` with the extreme non-NULL `key` (bound to the rows), or None. */
  final def of(rows: Iterator[InternalRow], key: Expression): Option[InternalRow] = {
    val keyOf = UnsafeProjection.create(Seq(key))
    val ordering = PhysicalDataType.ordering(key.dataType)
    var best: InternalRow = null
    var bestKey: Any = null
    rows.foreach { row =>
      val k = keyOf(row)
      if (!k.isNullAt(0)) {
        val value = k.get(0, key.dataType)
        if (best == null || better(ordering.compare(value, bestKey))) {
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
  final def across(rows: RDD[InternalRow], key: Expression, schema: StructType): (Long, Option[InternalRow]) = {
    val e = this
    val perPartition = rows.mapPartitions { partition =>
      var n = 0L
      val counted = partition.map { row => n += 1; row }
      val best = e.of(counted, key).map(UnsafeProjection.create(schema)(_).copy())
      Iterator.single((n, best))
    }.collect()
    (perPartition.iterator.map(_._1).sum, of(perPartition.iterator.flatMap(_._2), key))
  }

  override def toString: String = name
}

private[rangejoin] object Extreme {
  case object Max extends Extreme("max") {
    override protected def better(comparison: Int): Boolean = comparison > 0
  }
  case object Min extends Extreme("min") {
    override protected def better(comparison: Int): Boolean = comparison < 0
  }

  /** The buffered key that decides `streamed op buffered` for some buffered row. */
  def deciding(op: RangeOp): Extreme = op match {
    case RangeOp.Lt | RangeOp.Le => Max
    case RangeOp.Gt | RangeOp.Ge => Min
  }
}
