package rangejoin.execution

import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}

import rangejoin.execution.index.RangeOp

/**
 * What a join's dynamic filter ([[DynamicFilterExec]]) filters by: planned with the join, set by
 * the join once its broadcast is sorted. The bound is known only then, as the values of Spark's
 * dynamic partition pruning are known only once its broadcast is built.
 * {{{
 *   planned:    PiecewiseMergeJoin (bound B)        run:   the join reads its broadcast, sets
 *               :- RangeJoinDynamicFilter (B)                B = streamed key < 1000 (the max key)
 *               :  +- streamed plan                        the filter reads B: keeps s < 1000
 *               +- SortedBroadcast
 * }}}
 * The join sets it before it executes its streamed side or generates that side's code, and the
 * filter reads it only then, on the driver; a filter that runs first fails rather than guess.
 * Copies of the plan (adaptive execution, `withNewChildren`) share one instance, so a join and
 * its filter always agree; identity is its equality, so no other join's filter is taken for it.
 *
 * @param op          reads `streamedKey op bufferedKey`, the comparison that sorts the buffer
 * @param streamedKey the streamed side's key of that comparison; it cannot fail
 * @param keepRejected the anti join's existence fast path: the rows the bound rejects are the answer
 * @param source      what sets it, as EXPLAIN names the bound: the join above, from its buffered
 *                    side, or a [[SideSwitchExec]], from the side it measured
 */
private[rangejoin] final class DynamicBound(
    val op: RangeOp,
    val streamedKey: Expression,
    val keepRejected: Boolean,
    val source: String = DynamicBound.BufferedExtreme) extends Serializable {

  @transient @volatile private var current: Option[DynamicBound.Filter] = None

  def set(filter: DynamicBound.Filter): Unit = current = Some(filter)

  def get: DynamicBound.Filter = current.getOrElse(throw unset)

  /** The filter, if the join has set it: code may be generated before (EXPLAIN CODEGEN). */
  def peek: Option[DynamicBound.Filter] = current

  def unset: IllegalStateException = new IllegalStateException(
    s"the dynamic filter on $streamedKey ran before $source was known")

  override def toString: String =
    s"${if (keepRejected) "NOT " else ""}$streamedKey ${op.symbol} $source"
}

private[rangejoin] object DynamicBound {
  /**
   * The filter for one run: `predicate` over the streamed rows (None keeps every row: an unsorted
   * buffer, whose keys are not known), and the bound a file scan may be given ([[ScanBound]]).
   */
  final case class Filter(predicate: Option[Expression], scanBound: Option[(RangeOp, Literal)])

  val KeepAll: Filter = Filter(None, None)

  val BufferedExtreme = "the buffered side's extreme key"
}
