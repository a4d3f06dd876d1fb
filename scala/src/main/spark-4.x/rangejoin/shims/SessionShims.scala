package rangejoin.shims

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedHint}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.{CollationFactory, UnsafeRowUtils}
import org.apache.spark.sql.classic.{SparkSession => ClassicSession}
import org.apache.spark.sql.execution.SparkStrategy
import org.apache.spark.sql.types.{DataType, StringType}

/** What Spark 4 has and Spark 3.5 has not: the classic session, collations, hint rules. */
private[rangejoin] object SessionShims {

  /** The planner's extra strategies of a classic (not Connect) session. */
  def extraStrategies(session: SparkSession): Option[Seq[SparkStrategy]] = session match {
    case classic: ClassicSession => Some(classic.sessionState.planner.extraPlanningStrategies)
    case _ => None
  }

  /** `plan` through the session's optimizer (a classic session's; any other leaves it as it is). */
  def optimize(session: SparkSession, plan: LogicalPlan): LogicalPlan = session match {
    case classic: ClassicSession => classic.sessionState.optimizer.execute(plan)
    case _ => plan
  }

  /** Injects `rule` with Spark's own hint rules, before any reference is resolved. */
  def injectHintRule(extensions: SparkSessionExtensions, rule: Rule[LogicalPlan]): Unit =
    extensions.injectHintResolutionRule(_ => rule)

  def hintParameters(hint: UnresolvedHint): Seq[Expression] = hint.parameters

  /** An ORC scan's bound: Spark 4 pushes timestamps to ORC exactly (see Spark 3.5's). */
  def orcBound(bound: Literal, upper: Boolean): Literal = bound

  /** A string type whose order and equality are its UTF-8 bytes' (UTF8_BINARY). */
  def isBinaryString(s: StringType): Boolean = s.collationId == CollationFactory.UTF8_BINARY_COLLATION_ID

  /** Values of this type are equal exactly when their bytes are (no collation says otherwise). */
  def isBinaryStable(dataType: DataType): Boolean = UnsafeRowUtils.isBinaryStable(dataType)
}
