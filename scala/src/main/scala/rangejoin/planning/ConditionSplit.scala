package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import rangejoin.condition.{CannotFail, Evaluable, KeyTypes, RangeCondition, RangeOp, RangePredicate}

/** Splits a join condition into the comparisons that drive a range join and the residual ([[RangeCondition]]). */
private[rangejoin] object ConditionSplit extends PredicateHelper {

  /**
   * The conjuncts of `condition` that drive the join, and the others, in their original order, as
   * the residual, for a join that streams the left side or not; None when no conjunct qualifies.
   * A conjunct qualifies when it compares an expression of one side with one of the other (`<`,
   * `<=`, `>`, `>=`, either way round) on keys rangejoin can sort: deterministic, of one supported
   * type, without subqueries.
   *
   * The first qualifying conjunct drives. A second one joins it, making a band, when it bounds the
   * other side from the opposite direction (`l.x >= r.lo AND l.x < r.hi`, `a.lo < b.hi AND b.lo <
   * a.hi`) and both are on keys ordered as longs (numbers, dates, timestamps, intervals: the
   * interval index keeps one of them in a tree of longs).
   *
   * Spark evaluates the conjuncts in order on every pair, each only where those before it held.
   * The join evaluates a driving conjunct's keys once per row instead, on rows an earlier conjunct
   * would have rejected, and the conjuncts left before it, now residual, only on the pairs it
   * finds. So an error Spark raises on some pair would be lost, or one it never raises would
   * appear, unless:
   *  - the first driver is the first conjunct, or its keys and every conjunct before it cannot
   *    fail ([[CannotFail]]);
   *  - a band's second bound has a streamed key that cannot fail, and every conjunct before it
   *    but the first driver cannot fail. Its buffered key may fail (`f.k < d.k + 500` under ANSI):
   *    it is evaluated once per buffered row when the broadcast is built, and if it raises on any
   *    row the buffer stays unsorted and the join compares every pair in Spark's order, raising
   *    exactly where Spark does (see SortedBuffer).
   */
  def split(
      condition: Expression,
      left: LogicalPlan,
      right: LogicalPlan,
      streamedIsLeft: Boolean): Option[RangeCondition] = {
    val conjuncts = splitConjunctivePredicates(condition)
    val ranges = conjuncts.indices.flatMap(i => asRange(conjuncts(i), left, right).map(i -> _))
    val drivers = ranges.filter { case (i, p) =>
      i == 0 || (CannotFail(p.leftKey) && CannotFail(p.rightKey) && conjuncts.take(i).forall(CannotFail(_)))
    }
    drivers.headOption.map { case (first, primary) =>
      def streamedKey(p: RangePredicate) = if (streamedIsLeft) p.leftKey else p.rightKey
      val second = ranges.collectFirst {
        case (j, p) if j > first && opposite(primary.op, p.op) && orderedAsLong(primary) &&
            orderedAsLong(p) && CannotFail(streamedKey(p)) &&
            conjuncts.indices.take(j).forall(i => i == first || CannotFail(conjuncts(i))) => (j, p)
      }
      val used = Set(first) ++ second.map(_._1)
      val residual = conjuncts.indices.filterNot(used).map(conjuncts).reduceOption(And)
      RangeCondition(primary +: second.map(_._2).toSeq, residual)
    }
  }

  private def opposite(a: RangeOp, b: RangeOp) = a.isLess != b.isLess

  private def orderedAsLong(p: RangePredicate) = KeyTypes.orderedAsLong(p.leftKey.dataType)

  private def asRange(conjunct: Expression, left: LogicalPlan, right: LogicalPlan): Option[RangePredicate] = {
    conjunct match {
      case RangeOp(a, op, b) if a.dataType == b.dataType && KeyTypes.sortable(a.dataType) =>
        if (isKey(a, left) && isKey(b, right)) Some(RangePredicate(a, op, b, leftKeyFirst = true))
        else if (isKey(a, right) && isKey(b, left)) Some(RangePredicate(b, op.flip, a, leftKeyFirst = false))
        else None
      case _ => None
    }
  }

  /** An expression over `side` alone that can be evaluated on its rows. */
  def isKey(e: Expression, side: LogicalPlan): Boolean =
    e.references.nonEmpty && e.references.subsetOf(side.outputSet) && Evaluable(e)
}
