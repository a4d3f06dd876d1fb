package rangejoin.execution.broadcast

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Expression}
import org.apache.spark.sql.catalyst.plans.physical.BroadcastMode

import rangejoin.execution.index.SortedBuffer

import rangejoin.condition.Extreme
/**
 * Broadcasts the buffered side sorted by `key` (bound to the buffered output), as a
 * [[SortedBuffer]] payload: BroadcastExchangeExec calls `transform` once, on the driver, so the
 * sort happens once per broadcast rather than once per task. Two joins share a broadcast only
 * when they sort the same side by the same key.
 *
 * With `extreme`, the broadcast holds only the buffered row with that extreme key (see
 * [[Extreme]]); the payload's layout is the same. With `groupKeys` (equality keys), the rows are
 * grouped by them, and sorted by `key` within each group ([[rangejoin.execution.index.KeyGroups]]).
 * With `keepOrigins`, the payload keeps each row's position before sorting, for a join that may
 * try a row's candidates in stock Spark's order (`JoinSpec.replaysInSparkOrder`).
 */
private[rangejoin] final case class SortedBroadcastMode(
    key: Expression,
    secondKey: Option[Expression],
    extreme: Option[Extreme],
    groupKeys: Seq[Expression],
    keepOrigins: Boolean) extends BroadcastMode {

  override def transform(rows: Array[InternalRow]): SortedBuffer =
    SortedBuffer.build(rows, key, secondKey, groupKeys, keepOrigins)

  override def transform(rows: Iterator[InternalRow], sizeHint: Option[Long]): SortedBuffer =
    transform(rows.toArray)

  override def canonicalized: BroadcastMode =
    copy(key = key.canonicalized, secondKey = secondKey.map(_.canonicalized),
      groupKeys = groupKeys.map(_.canonicalized))
}

private[rangejoin] object SortedBroadcastMode {

  /**
   * The mode that sorts rows of `output` by `key`. The key is bound as nullable whatever the
   * output says: a column a plan proves non-null in one place (a Filter) may not be proved so in
   * another (the logical plan, or a re-planned one), and a mode differing by that bit alone would
   * not satisfy a join's requirement. Treating a key as nullable is always safe.
   */
  def of(
      key: Expression,
      secondKey: Option[Expression],
      groupKeys: Seq[Expression],
      output: Seq[Attribute],
      extreme: Option[Extreme],
      keepOrigins: Boolean): SortedBroadcastMode = {
    val nullable = output.map(_.withNullability(true))
    SortedBroadcastMode(BindReferences.bindReference(key, nullable),
      secondKey.map(BindReferences.bindReference(_, nullable)), extreme,
      groupKeys.map(BindReferences.bindReference(_, nullable)), keepOrigins)
  }
}
