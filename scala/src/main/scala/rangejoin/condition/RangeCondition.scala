package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * One comparison of the join condition that drives the join, as written: `leftKey op rightKey`,
 * each key over one side; `leftKeyFirst` says whether the left key is the comparison's first
 * operand (Spark evaluates the second only when the first is not NULL).
 */
private[rangejoin] final case class RangePredicate(leftKey: Expression, op: RangeOp, rightKey: Expression, leftKeyFirst: Boolean) {
  override def toString: String = s"$leftKey $op $rightKey"
}

/**
 * A driving comparison as the join runs it, `streamed op buffered`: the buffered key is searched
 * for, the streamed key is the probe. `op` Lt/Le bounds the buffered key from below (it must be
 * above the probe), Gt/Ge from above.
 */
private[rangejoin] final case class OrientedPredicate(
    streamedKey: Expression,
    op: RangeOp,
    bufferedKey: Expression,
    streamedKeyFirst: Boolean)

/**
 * A join condition as a range join reads it: the comparisons that drive it, and the rest.
 * {{{
 *   one predicate   l.ts < r.ts                        the buffered keys above (or below) a probe
 *   a band          l.x >= r.lo AND l.x < r.hi          the buffered rows between two probes
 *   equality keys   l.chr = r.chr AND (either above)    the same, among the rows of l's key only
 * }}}
 * In a band the two predicates bound the other side from opposite directions. `residual` is the
 * other conjuncts, in their original order. `leftKeys` and `rightKeys` are the equi-join keys, as
 * Spark's hash joins take them (ExtractEquiJoinKeys). The one place left/right becomes
 * streamed/buffered is `oriented` (and `orientedKeys`). Found by planning.ConditionSplit.
 */
private[rangejoin] final case class RangeCondition(
    predicates: Seq[RangePredicate],
    residual: Option[Expression],
    leftKeys: Seq[Expression] = Nil,
    rightKeys: Seq[Expression] = Nil) {
  require(predicates.size == 1 || predicates.size == 2, predicates)
  require(leftKeys.size == rightKeys.size, (leftKeys, rightKeys))

  def isBand: Boolean = predicates.size == 2

  def isKeyed: Boolean = leftKeys.nonEmpty

  /** The predicates as the join runs them, with the left side streamed or not. */
  def oriented(streamedIsLeft: Boolean): Seq[OrientedPredicate] = predicates.map { p =>
    if (streamedIsLeft) OrientedPredicate(p.leftKey, p.op, p.rightKey, p.leftKeyFirst)
    else OrientedPredicate(p.rightKey, p.op.flip, p.leftKey, !p.leftKeyFirst)
  }

  /** The equality keys as the join runs them: (streamed keys, buffered keys). */
  def orientedKeys(streamedIsLeft: Boolean): (Seq[Expression], Seq[Expression]) =
    if (streamedIsLeft) (leftKeys, rightKeys) else (rightKeys, leftKeys)

  override def toString: String = {
    val equalities = leftKeys.zip(rightKeys).map { case (l, r) => s"$l = $r" }
    (equalities ++ predicates.map(_.toString)).mkString(" AND ")
  }
}
