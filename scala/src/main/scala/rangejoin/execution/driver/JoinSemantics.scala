package rangejoin.execution.driver

import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans._

/** What a join emits for a row of one side on its own, given whether any pair with it passed. */
private[rangejoin] sealed trait RowEmit extends Serializable

private[rangejoin] object RowEmit {
  /** Nothing: the row appears only inside pairs (inner joins, and the non-preserved side). */
  case object Never extends RowEmit
  /** Once, padded with NULLs, when it had no passing pair (the preserved side of outer joins). */
  case object PaddedIfUnmatched extends RowEmit
  /** Once, when it had a passing pair (left semi). */
  case object IfMatched extends RowEmit
  /** Once, when it had no passing pair (left anti). */
  case object IfUnmatched extends RowEmit
  /** Once, with a boolean saying whether it had a passing pair (existence join). */
  case object WithMatchFlag extends RowEmit
}

/**
 * Everything a join type means to the driver, from the streamed and buffered points of view:
 * whether passing pairs are output, and what each side emits on its own. Every supported
 * (join type, build side) is one line of [[JoinSemantics.apply]]; no join type has code of its
 * own anywhere else.
 *
 * What the streamed side emits is known per streamed row. What the buffered side emits depends
 * on every streamed row, so it is decided after all of them, from the merged [[Matches]].
 */
private[rangejoin] final case class JoinSemantics(emitsPairs: Boolean, streamed: RowEmit, buffered: RowEmit) {

  /** Whether the pass over the streamed rows outputs anything. */
  def streamedPassEmits: Boolean = emitsPairs || streamed != RowEmit.Never

  /** Whether the buffered rows' output needs the matches of all streamed rows. */
  def needsBufferedMatches: Boolean = buffered != RowEmit.Never
}

private[rangejoin] object JoinSemantics {
  import RowEmit._

  /** The semantics of `joinType` with `buildSide` buffered; None for join types not handled. */
  def apply(joinType: JoinType, buildSide: BuildSide): Option[JoinSemantics] =
    (joinType, buildSide) match {
      case (_: InnerLike, _) => Some(JoinSemantics(emitsPairs = true, Never, Never))
      case (LeftOuter, BuildRight) | (RightOuter, BuildLeft) =>
        Some(JoinSemantics(emitsPairs = true, PaddedIfUnmatched, Never))
      case (LeftOuter, BuildLeft) | (RightOuter, BuildRight) =>
        Some(JoinSemantics(emitsPairs = true, Never, PaddedIfUnmatched))
      case (FullOuter, _) => Some(JoinSemantics(emitsPairs = true, PaddedIfUnmatched, PaddedIfUnmatched))
      case (LeftSemi, BuildRight) => Some(JoinSemantics(emitsPairs = false, IfMatched, Never))
      case (LeftSemi, BuildLeft) => Some(JoinSemantics(emitsPairs = false, Never, IfMatched))
      case (LeftAnti, BuildRight) => Some(JoinSemantics(emitsPairs = false, IfUnmatched, Never))
      case (LeftAnti, BuildLeft) => Some(JoinSemantics(emitsPairs = false, Never, IfUnmatched))
      case (_: ExistenceJoin, BuildRight) => Some(JoinSemantics(emitsPairs = false, WithMatchFlag, Never))
      case (_: ExistenceJoin, BuildLeft) => Some(JoinSemantics(emitsPairs = false, Never, WithMatchFlag))
      case _ => None
    }
}
