package rangejoin.planning

import scala.collection.mutable

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal, StringLiteral}
import org.apache.spark.sql.types.NumericType
import org.apache.spark.sql.catalyst.plans.logical.{HintInfo, JoinHint, LogicalPlan, ResolvedHint, SubqueryAlias, UnresolvedHint, View}
import org.apache.spark.sql.catalyst.rules.Rule

import rangejoin.shims.SessionShims

/**
 * Resolves `/*+ RANGE_JOIN(t, ...) */` (and `Dataset.hint("range_join")`) the way Spark resolves
 * its own join strategy hints: each named relation of the hinted query block is marked with a
 * [[RangeJoinHint]], which Spark's optimizer then carries to the join above it. Names that match
 * no relation are reported through Spark's hint error handler, as for `BROADCAST(t)`.
 *
 * Spark's own hint rules run before relations are resolved and leave hints they do not know
 * alone; Spark drops the hints still unresolved only after resolution. This rule runs in between,
 * when the hinted relations are resolved `SubqueryAlias`es.
 */
private[rangejoin] object RangeJoinHints extends Rule[LogicalPlan] {

  private def hintInfo = HintInfo(strategy = Some(RangeJoinHint.INSTANCE))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case hint @ UnresolvedHint(name, parameters, child)
        if name.equalsIgnoreCase(RangeJoinHint.NAME) && child.resolved =>
      val (names, binSize) = RangeJoinHints.splitBinSize(SessionShims.hintParameters(hint))
      val info = binSize.fold(hintInfo)(size => HintInfo(strategy = Some(new RangeJoinBinHint(size))))
      if (names.isEmpty) {
        ResolvedHint(child, info)
      } else {
        val named = names.map {
          case StringLiteral(table) => UnresolvedAttribute.parseAttributeName(table)
          case UnresolvedAttribute(nameParts) => nameParts
          case other => // Spark's error for a join strategy hint's bad parameter
            throw new AnalysisException("_LEGACY_ERROR_TEMP_1047",
              Map("hintName" -> name, "invalidParams" -> other.sql))
        }.toSet
        val found = mutable.HashSet.empty[Seq[String]]
        val marked = mark(child, named, found, info)
        conf.hintErrorHandler.hintRelationsNotFound(name, parameters, named -- found)
        marked
      }
  }

  // Like Spark's join strategy hints: the relations of this query block, not inside named
  // relations, views or already hinted plans.
  private def mark(
      plan: LogicalPlan,
      named: Set[Seq[String]],
      found: mutable.Set[Seq[String]],
      hintInfo: HintInfo): LogicalPlan = {
    def matching(alias: SubqueryAlias): Boolean = {
      val ident = alias.identifier.qualifier :+ alias.identifier.name
      val hits = named.filter(matchedIdentifier(_, ident))
      found ++= hits
      hits.nonEmpty
    }
    plan match {
      case ResolvedHint(alias: SubqueryAlias, hint) if matching(alias) =>
        ResolvedHint(alias, hintInfo.merge(hint, conf.hintErrorHandler))
      case alias: SubqueryAlias if matching(alias) => ResolvedHint(alias, hintInfo)
      case _: ResolvedHint | _: View | _: SubqueryAlias => plan
      case _ => plan.mapChildren(mark(_, named, found, hintInfo))
    }
  }

  /**
   * Whether a hint's name is the relation's, as Spark's join strategy hints match them
   * (`ResolveHints.matchedIdentifier`, public only from Spark 4.3): the name's parts are the
   * identifier's last parts.
   */
  private def matchedIdentifier(identInHint: Seq[String], identInQuery: Seq[String]): Boolean =
    identInHint.length <= identInQuery.length &&
      identInHint.zip(identInQuery.takeRight(identInHint.length)).forall { case (h, q) => conf.resolver(h, q) }

  /** The RANGE_JOIN hint on one side of a join, if any. */
  def of(side: Option[HintInfo]): Option[HintInfo] =
    side.filter(_.strategy.contains(RangeJoinHint.INSTANCE))

  def onLeft(hint: JoinHint): Boolean = of(hint.leftHint).isDefined

  def onRight(hint: JoinHint): Boolean = of(hint.rightHint).isDefined

  /** The bin size of a `RANGE_JOIN(t, size)` hint on either side of a join, if any. */
  def binSize(hint: JoinHint): Option[Double] =
    (hint.leftHint.toSeq ++ hint.rightHint.toSeq).flatMap(_.strategy).collectFirst {
      case bins: RangeJoinBinHint => bins.binSize
    }

  /**
   * A hint's relation names, and its bin size: a number written last (`RANGE_JOIN(t, 100)`, as
   * Databricks writes it; `df.hint("range_join", 100)` hints `df` itself). A bin size that is
   * not a positive finite number fails the query: ignoring it would plan the join some other way
   * than the user asked.
   */
  def splitBinSize(parameters: Seq[Expression]): (Seq[Expression], Option[Double]) = parameters.lastOption match {
    case Some(Literal(value, _: NumericType)) =>
      def bad(why: String) = new IllegalArgumentException(
        s"Invalid bin size in hint ${RangeJoinHint.NAME}: $value ($why). The bin size follows the " +
          s"relations it applies to and is a positive number in the join keys' units (days for " +
          s"dates, seconds for timestamps), as in /*+ ${RangeJoinHint.NAME}(t, 100) */.")
      val size = Option(value).map(_.toString.toDouble).getOrElse(throw bad("NULL"))
      if (size.isNaN || size.isInfinite || size <= 0) throw bad("not a positive finite number")
      (parameters.init, Some(size))
    case _ => (parameters, None)
  }
}

/**
 * Keeps a `RANGE_JOIN` hint's parameters relation names. Injected with Spark's own hint rules, it
 * runs before any reference is resolved and turns each name into a string literal, which
 * [[RangeJoinHints]] reads the same way. Left an attribute, a name that is also a column of the
 * hinted relation (`/*+ RANGE_JOIN(b) */` over `big b`, whose column is `b`) would be resolved to
 * that column before [[RangeJoinHints]] reads it.
 */
private[rangejoin] object RangeJoinHintNames extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case hint @ UnresolvedHint(name, parameters, _)
        if name.equalsIgnoreCase(RangeJoinHint.NAME) &&
          parameters.exists(_.isInstanceOf[UnresolvedAttribute]) =>
      hint.copy(parameters = parameters.map {
        case attribute: UnresolvedAttribute => Literal(attribute.name) // quoted where needed
        case other => other
      })
  }
}
