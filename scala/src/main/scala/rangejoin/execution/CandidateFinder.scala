package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow

/**
 * Finds, for one streamed row, the buffered rows that may satisfy the join condition: a run
 * [from, until) of buffered row positions. Its contract with [[StreamedJoinIterator]]: every
 * buffered row that satisfies the condition with the streamed row lies in the run, and every row
 * in the run satisfies it once the finder's residual (if any) also holds.
 *
 * Runs of one join all touch the same end of the buffered rows (see [[SortedKeys]]), so the
 * union of any of them is a single interval: [[Matches]] relies on that.
 */
trait CandidateFinder {

  /** Positions the run for `streamed`. */
  def find(streamed: InternalRow): Unit

  def from: Int

  def until: Int
}

/**
 * The piecewise merge join's finder: the streamed key's run in the sorted buffered keys, found by
 * binary search. `op` reads `streamed op buffered`; the streamed key is field `keyOrdinal` of
 * `streamedKey(row)` (a projection, or the row itself when the key is one of its columns).
 *
 * `probe` is false when Spark would not evaluate the streamed key at all (no buffered row to
 * pair it with): the key is then not evaluated either, so an expression that could raise an
 * error on this row does not.
 */
final class SortedRunFinder(
    keys: SortedKeys,
    op: RangeOp,
    streamedKey: InternalRow => InternalRow,
    keyOrdinal: Int,
    probe: Boolean) extends CandidateFinder {

  private[this] val runIsSuffix = op == RangeOp.Lt || op == RangeOp.Le
  private[this] val boundaryIncludesEqual = op == RangeOp.Le || op == RangeOp.Gt
  private[this] var start = 0
  private[this] var end = 0

  override def find(streamed: InternalRow): Unit = {
    if (probe && keys.load(streamedKey(streamed), keyOrdinal)) {
      val boundary = keys.boundary(boundaryIncludesEqual)
      if (runIsSuffix) {
        start = boundary
        end = keys.size
      } else {
        start = 0
        end = boundary
      }
    } else {
      start = 0
      end = 0
    }
  }

  override def from: Int = start

  override def until: Int = end
}

/** Every buffered row is a candidate: the nested-loop finder, for an unsorted buffer. */
final class EveryRowFinder(numRows: Int) extends CandidateFinder {
  override def find(streamed: InternalRow): Unit = ()
  override def from: Int = 0
  override def until: Int = numRows
}
