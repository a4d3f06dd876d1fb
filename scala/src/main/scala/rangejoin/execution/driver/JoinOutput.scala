package rangejoin.execution.driver

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.BooleanType

/**
 * Builds the join's output rows: the pairs, and the rows of one side emitted on their own (padded
 * with NULLs, or flagged for an existence join). One instance per task: it reuses its rows.
 *
 * Every output row is projected from a left part and a right part: the left row, then the right
 * row (or NULLs), or for an existence join the left row and its flag. Pairs are laid out that way
 * whichever side is streamed, so that the residual binds to `left ++ right` as in Spark's joins.
 */
private[rangejoin] final class JoinOutput(
    output: Seq[Attribute],
    left: Seq[Attribute],
    right: Seq[Attribute],
    exists: Option[Attribute],
    streamedIsLeft: Boolean) {

  private[this] val joined = new JoinedRow
  // Padding puts NULLs where the inputs may say "never null": bind everything as nullable.
  private[this] val project = UnsafeProjection.create(
    output, (left ++ exists.map(Seq(_)).getOrElse(right)).map(_.withNullability(true)))
  private[this] val leftNulls = new GenericInternalRow(left.length)
  private[this] val rightNulls = new GenericInternalRow(right.length)
  private[this] val flag = new SpecificInternalRow(Seq(BooleanType))

  /** The pair (streamed, buffered) laid out left then right; valid until the next call. */
  def arrange(streamed: InternalRow, buffered: InternalRow): InternalRow =
    if (streamedIsLeft) joined(streamed, buffered) else joined(buffered, streamed)

  /** The output row of the pair last arranged. */
  def pair(): InternalRow = project(joined)

  /**
   * The output row for `row` of one side on its own, as `emit` says given `matched`; null when it
   * says nothing is emitted.
   */
  def alone(row: InternalRow, rowIsLeft: Boolean, emit: RowEmit, matched: Boolean): InternalRow =
    emit match {
      case RowEmit.Never => null
      case RowEmit.PaddedIfUnmatched | RowEmit.IfUnmatched => if (matched) null else padded(row, rowIsLeft)
      case RowEmit.IfMatched => if (matched) padded(row, rowIsLeft) else null
      case RowEmit.WithMatchFlag =>
        flag.setBoolean(0, matched)
        project(joined(row, flag))
    }

  // Semi and anti joins output the left side only: "padding" then projects the row itself.
  private def padded(row: InternalRow, rowIsLeft: Boolean): InternalRow =
    project(if (rowIsLeft) joined(row, rightNulls) else joined(leftNulls, row))
}
