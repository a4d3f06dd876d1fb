package rangejoin.shims

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedHint}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.SparkStrategy
import org.apache.spark.sql.types.{DataType, StringType, StructType, TimestampNTZType, TimestampType}

/**
 * Spark 3.5: one session class, no collations (every string compares by its UTF-8 bytes), and no
 * injection point among the hint rules.
 */
private[rangejoin] object SessionShims {

  def extraStrategies(session: SparkSession): Option[Seq[SparkStrategy]] =
    Some(session.sessionState.planner.extraPlanningStrategies)

  /** `plan` through the session's optimizer. */
  def optimize(session: SparkSession, plan: LogicalPlan): LogicalPlan =
    session.sessionState.optimizer.execute(plan)

  /**
   * Spark 3.5 has no `injectHintResolutionRule`; its analyzer's hint rules run right after
   * parsing, before any reference is resolved. The parser's plans get `rule` instead, which is
   * the same point for SQL; `Dataset.hint`'s names are already string literals.
   */
  def injectHintRule(extensions: SparkSessionExtensions, rule: Rule[LogicalPlan]): Unit =
    extensions.injectParser((_, delegate) => new HintParser(delegate, rule))

  /** Spark 3.5 keeps `Dataset.hint`'s parameters as given: values become literals here. */
  def hintParameters(hint: UnresolvedHint): Seq[Expression] = hint.parameters.map {
    case e: Expression => e
    case value => Literal(value)
  }

  /**
   * Spark 3.5's ORC pushdown compares a timestamp bound at millisecond precision (found by the
   * file-scan differential suite: `k <= 00:00:00.0015` skipped stripes of 00:00:00.0011 keys), so
   * a timestamp bound goes to ORC rounded outward to whole milliseconds: never narrower.
   */
  def orcBound(bound: Literal, upper: Boolean): Literal = bound.dataType match {
    case TimestampType | TimestampNTZType =>
      val micros = bound.value.asInstanceOf[Long]
      val millis = if (upper) Math.floorDiv(micros + 999, 1000) else Math.floorDiv(micros, 1000)
      Literal(millis * 1000, bound.dataType)
    case _ => bound
  }

  def isBinaryString(s: StringType): Boolean = true

  def isBinaryStable(dataType: DataType): Boolean = true

  private final class HintParser(delegate: ParserInterface, rule: Rule[LogicalPlan]) extends ParserInterface {
    override def parsePlan(sqlText: String): LogicalPlan = rule(delegate.parsePlan(sqlText))
    override def parseQuery(sqlText: String): LogicalPlan = rule(delegate.parseQuery(sqlText))
    override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
    override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
    override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
      delegate.parseFunctionIdentifier(sqlText)
    override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
    override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
    override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
  }
}
