package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, FilterExec, InputAdapter, ProjectExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.expressions.CannotFail
import rangejoin.execution.index.RangeOp

/**
 * The dynamic filter: once the buffered side is sorted, its extreme key bounds every streamed
 * key that can match, so streamed rows beyond it are dropped before the join sees them.
 * {{{
 *   buffered keys  1 .. 1000          streamed s, condition s < b   =>   keep s < 1000
 *
 *   WholeStageCodegen                 WholeStageCodegen
 *   +- PiecewiseMergeJoin             +- PiecewiseMergeJoin
 *      :- RangeJoinDynamicFilter  ==>    :- s < 1000                  (in the generated loop)
 *      :  +- Scan t2                     :  +- Scan t2, PushedFilters: s <= 1000
 *                                                           (Parquet/ORC row groups)
 * }}}
 * It is planned with the join ([[DynamicFilterExec]]) and filters by the bound the join sets at
 * run time ([[DynamicBound]]), for join types where a streamed row with no match outputs nothing,
 * and only with a streamed key that cannot fail (evaluating it on rows Spark would not pair must
 * not raise an error). It is exact: it keeps what Spark's comparison keeps. Where the key is a
 * column of a Parquet or ORC scan reached only through operators that see each row on its own
 * and cannot fail, a widened form of it ([[ScanBound]]) is also pushed to the scan, which skips
 * row groups whose statistics exclude it. That scan is a copy of the planned one reporting to
 * the planned one's metrics, so the SQL UI shows what it read.
 */
private[rangejoin] object DynamicFilter {

  /**
   * The extreme buffered key (see [[Extreme]]) that bounds `streamed op buffered`, as a literal;
   * None when no buffered row has a key, so nothing can match. `bufferedKey` is bound to
   * buffered rows.
   */
  def bound(op: RangeOp, bufferedKey: Expression, buffer: BufferSummary): Option[Literal] =
    buffer.extremeRow(Extreme.deciding(op)).map { row =>
      Literal(InternalRow.copyValue(bufferedKey.eval(row)), bufferedKey.dataType)
    }

  /**
   * The filter for one run of the join ([[DynamicBound]]): `streamedKey op bound`, or for the
   * anti join's fast path its complement, which no scan can skip by; every row where the buffer
   * is unsorted (a buffered key raised an error: no bound is known).
   */
  def of(dynamic: DynamicBound, bufferedKey: Expression, buffer: BufferSummary): DynamicBound.Filter =
    if (!buffer.isSorted) DynamicBound.KeepAll
    else {
      val extreme = bound(dynamic.op, bufferedKey, buffer)
      val exact = predicate(dynamic.op, dynamic.streamedKey, extreme)
      if (dynamic.keepRejected) DynamicBound.Filter(Some(Not(Coalesce(Seq(exact, Literal.FalseLiteral)))), None)
      else DynamicBound.Filter(Some(exact), extreme.map(dynamic.op -> _))
    }

  /** `streamedKey op bound`, exactly as Spark compares; false when there is no bound. */
  def predicate(op: RangeOp, streamedKey: Expression, bound: Option[Literal]): Expression =
    bound.map(b => compare(streamedKey, op, b)).getOrElse(Literal.FalseLiteral)

  private def compare(key: Expression, op: RangeOp, bound: Expression): Expression = op match {
    case RangeOp.Lt => LessThan(key, bound)
    case RangeOp.Le => LessThanOrEqual(key, bound)
    case RangeOp.Gt => GreaterThan(key, bound)
    case RangeOp.Ge => GreaterThanOrEqual(key, bound)
  }

  /**
   * Pushes `column op bound` to the file scan that produces `column`, in a form the scan's
   * statistics can only over-approximate ([[ScanBound]]). Rows skipped there never reach the
   * operators above the scan, so it crosses only operators for which that is the same as
   * dropping them at the join: ones that pass the column through unchanged, are deterministic,
   * cannot fail ([[CannotFail]]; a failing row skipped at the scan would hide Spark's error)
   * and compute each row on its own. A non-deterministic projection (rand, or
   * monotonically_increasing_id, which numbers rows as they come) or a filter that may raise
   * stops it.
   */
  def pushToScan(plan: SparkPlan, column: Attribute, op: RangeOp, bound: Literal): SparkPlan = {
    def passes(expressions: Seq[Expression]) =
      plan.outputSet.contains(column) && expressions.forall(e => e.deterministic && CannotFail(e))
    plan match {
      case p @ (_: WholeStageCodegenExec | _: InputAdapter | _: ColumnarToRowExec)
          if plan.outputSet.contains(column) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case p: FilterExec if passes(p.condition :: Nil) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case p: ProjectExec if passes(p.projectList) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case scan: FileSourceScanExec if isDataColumn(scan, column) =>
        ScanBound(scan, column, op, bound).map(new PushedScan(scan, _)).getOrElse(scan)
      case other => other
    }
  }

  private def isDataColumn(scan: FileSourceScanExec, column: Attribute): Boolean =
    scan.output.exists(_.exprId == column.exprId) &&
      !scan.partitionFilters.exists(SubqueryExpression.hasSubquery) &&
      scan.requiredSchema.fieldNames.exists(_.equalsIgnoreCase(column.name)) &&
      !scan.relation.partitionSchema.fieldNames.exists(_.equalsIgnoreCase(column.name))
}

/**
 * The planned scan reading with the bound too, and reporting to the planned scan's metrics: a
 * scan fixes its pushed filters when planned, so the bound needs a new scan, but what it reads is
 * the planned scan's to report. The bound goes to the relation's format ([[ScanBound]]), not to
 * the scan's data filters, which a format would apply to every file alike.
 */
private final class PushedScan(planned: FileSourceScanExec, relation: HadoopFsRelation)
  extends FileSourceScanExec(
    relation, planned.stream, planned.output, planned.requiredSchema,
    planned.partitionFilters, planned.optionalBucketSet, planned.optionalNumCoalescedBuckets,
    planned.dataFilters, planned.tableIdentifier, planned.disableBucketedScan,
    planned.markedForSingleTaskExecution) {

  override def metrics: Map[String, SQLMetric] = planned.metrics

  override lazy val driverMetrics: Map[String, SQLMetric] = planned.driverMetrics

  // Only the format tells this scan from the planned one, and Spark's Parquet and ORC formats
  // equal any of their class: `withNewChildren` would take this scan for the planned one (equal
  // children) and keep that.
  override def canEqual(other: Any): Boolean = other.isInstanceOf[PushedScan]

  override def equals(other: Any): Boolean = other match {
    case o: PushedScan => o.relation.fileFormat == relation.fileFormat && super.equals(o)
    case _ => false
  }

  override def hashCode(): Int = super.hashCode()
}
