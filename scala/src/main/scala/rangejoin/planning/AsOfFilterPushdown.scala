package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.{And, Expression, PredicateHelper, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Pushes a filter's conjuncts on the left side's columns alone below a [[RangeAsOfJoin]], as
 * Spark pushes them below its own joins (and then on into scans). An as-of join outputs each
 * left row at most once, with a match that depends on that row alone, so filtering left rows
 * before or after it gives the same rows, for inner and left outer joins alike. Only filters that
 * are deterministic throughout, with no subquery, are split: their conjuncts may then be
 * evaluated in any order and place, as Spark's own pushdown assumes.
 */
private[rangejoin] object AsOfFilterPushdown extends Rule[LogicalPlan] with PredicateHelper {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transform {
    case f @ Filter(condition, j: RangeAsOfJoin) if condition.deterministic && !SubqueryExpression.hasSubquery(condition) =>
      val (leftOnly, rest) = splitConjunctivePredicates(condition).partition(onLeft(_, j))
      if (leftOnly.isEmpty) f
      else {
        val pushed = j.copy(left = Filter(leftOnly.reduce(And), j.left))
        if (rest.isEmpty) pushed else Filter(rest.reduce(And), pushed)
      }
  }

  private def onLeft(e: Expression, j: RangeAsOfJoin): Boolean = e.references.subsetOf(j.left.outputSet)
}
