package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import rangejoin.execution.{KeyCodec, RangeOp}
import rangejoin.expressions.CannotFail

/**
 * A join condition split for a piecewise merge join: the conjunct `leftKey op rightKey` that
 * drives it, each key over one side of the join only, and the other conjuncts, in their original
 * order, as the residual. `leftKeyFirst` says whether the left key was the comparison's first
 * operand as written, which Spark evaluates first (and the second only when the first is not NULL).
 */
final case class RangeCondition(
    leftKey: Expression,
    op: RangeOp,
    rightKey: Expression,
    leftKeyFirst: Boolean,
    residual: Option[Expression])

object RangeCondition extends PredicateHelper {

  /**
   * Splits `condition` on its first conjunct that compares an expression of one side with an
   * expression of the other (`<`, `<=`, `>`, `>=`, either way round) with keys rangejoin can sort:
   * deterministic, of a supported type, without subqueries. None when no conjunct qualifies.
   *
   * Spark evaluates the conjuncts in order on every pair, each only where those before it held.
   * A conjunct that is not the first may drive only if its keys and every conjunct before it
   * cannot fail ([[CannotFail]]): the driver evaluates its keys on rows an earlier conjunct
   * would have rejected, and the earlier conjuncts, now residual, only on the pairs it finds, so
   * an error Spark raises on some other pair would otherwise be lost.
   */
  def split(condition: Expression, left: LogicalPlan, right: LogicalPlan): Option[RangeCondition] = {
    val conjuncts = splitConjunctivePredicates(condition)
    conjuncts.indices.iterator.flatMap { i =>
      asRange(conjuncts(i), left, right)
        .filter { case (l, _, r, _) =>
          i == 0 || (CannotFail(l) && CannotFail(r) && conjuncts.take(i).forall(CannotFail(_)))
        }
        .map { case (l, op, r, leftFirst) =>
          RangeCondition(l, op, r, leftFirst, (conjuncts.take(i) ++ conjuncts.drop(i + 1)).reduceOption(And))
        }
    }.nextOption()
  }

  private def asRange(
      conjunct: Expression,
      left: LogicalPlan,
      right: LogicalPlan): Option[(Expression, RangeOp, Expression, Boolean)] = {
    def oriented(a: Expression, op: RangeOp, b: Expression) = {
      if (a.dataType != b.dataType || !KeyCodec.supports(a.dataType)) None
      else if (isKey(a, left) && isKey(b, right)) Some((a, op, b, true))
      else if (isKey(a, right) && isKey(b, left)) Some((b, op.flip, a, false))
      else None
    }
    conjunct match {
      case LessThan(a, b) => oriented(a, RangeOp.Lt, b)
      case LessThanOrEqual(a, b) => oriented(a, RangeOp.Le, b)
      case GreaterThan(a, b) => oriented(a, RangeOp.Gt, b)
      case GreaterThanOrEqual(a, b) => oriented(a, RangeOp.Ge, b)
      case _ => None
    }
  }

  private def isKey(e: Expression, side: LogicalPlan): Boolean =
    e.references.nonEmpty && e.references.subsetOf(side.outputSet) && e.deterministic &&
      !SubqueryExpression.hasSubquery(e)
}
