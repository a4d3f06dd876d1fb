package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, FilterExec, InputAdapter, ProjectExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * The dynamic filter: once the buffered side is sorted, its extreme key bounds every streamed
 * key that can match, so streamed rows beyond it are dropped before the join sees them.
 * {{{
 *   buffered keys  1 .. 1000          streamed s, condition s < b   =>   keep s < 1000
 *
 *   WholeStageCodegen                 WholeStageCodegen
 *   +- Project                        +- Filter s < 1000        (in the generated loop)
 *      +- Scan t2           ==>          +- Project
 *                                           +- Scan t2, PushedFilters: s < 1000
 *                                                                  (Parquet/ORC row groups)
 * }}}
 * It is applied at run time to the streamed plan the join executes (its bound exists only then),
 * for join types where a streamed row with no match outputs nothing, and only with a streamed key
 * that cannot fail (evaluating it on rows Spark would not pair must not raise an error).
 * The filter goes inside the streamed side's generated code, where a row costs a compare rather
 * than a trip through the join's iterator; where the key is a column of a file scan reached only
 * through projections and filters, it is also pushed to the scan, which skips row groups whose
 * statistics exclude it. That scan is a copy of the planned one reporting to the planned one's
 * metrics, so the SQL UI shows what it read; the operators copied on the way to it (a whole-stage
 * codegen node, a projection) report to copies of their metrics, which the UI does not show.
 */
object DynamicFilter {

  /**
   * `streamedKey op bound`, the bound being the extreme buffered key (see [[Extreme]]); false
   * when the buffer has no key, so nothing can match. `bufferedKey` is bound to buffered rows.
   */
  def predicate(
      op: RangeOp,
      streamedKey: Expression,
      bufferedKey: Expression,
      buffer: SortedBuffer): Expression = {
    val keyed = buffer.storedKeys.numElements()
    if (keyed == 0) return Literal.FalseLiteral
    val row = Extreme.deciding(op) match {
      case Extreme.Max => buffer.row(keyed - 1)
      case Extreme.Min => buffer.row(0)
    }
    val bound = Literal(InternalRow.copyValue(bufferedKey.eval(row)), bufferedKey.dataType)
    op match {
      case RangeOp.Lt => LessThan(streamedKey, bound)
      case RangeOp.Le => LessThanOrEqual(streamedKey, bound)
      case RangeOp.Gt => GreaterThan(streamedKey, bound)
      case RangeOp.Ge => GreaterThanOrEqual(streamedKey, bound)
    }
  }

  /** `plan` with `predicate` applied on top, counting what it drops in `skipped`. */
  def apply(plan: SparkPlan, predicate: Expression, skipped: SQLMetric): SparkPlan = {
    val counted = CountingFilter(predicate, skipped)
    val pushed = pushToScan(plan, predicate)
    pushed match {
      case stage: WholeStageCodegenExec => stage.withNewChildren(Seq(FilterExec(counted, stage.child)))
      case other => FilterExec(counted, other)
    }
  }

  // Only through operators that pass the key's column through unchanged and keep every row they
  // do not filter, so dropping rows at the scan drops exactly those rows above it.
  private def pushToScan(plan: SparkPlan, predicate: Expression): SparkPlan = {
    val column = predicate.references
    def keeps(p: SparkPlan) = column.subsetOf(p.outputSet)
    plan match {
      case _ if column.size != 1 || !keeps(plan) => plan
      case p @ (_: WholeStageCodegenExec | _: InputAdapter | _: ColumnarToRowExec | _: FilterExec |
                _: ProjectExec) =>
        p.withNewChildren(p.children.map(pushToScan(_, predicate)))
      case scan: FileSourceScanExec
          if !scan.partitionFilters.exists(SubqueryExpression.hasSubquery) &&
            column.forall(a => scan.requiredSchema.fieldNames.exists(_.equalsIgnoreCase(a.name)) &&
              !scan.relation.partitionSchema.fieldNames.exists(_.equalsIgnoreCase(a.name))) =>
        new PushedScan(scan, predicate)
      case other => other
    }
  }
}

/**
 * A predicate that counts the rows it rejects in a SQL metric, in generated code too (a metric
 * is an accumulator: each task's count reaches the driver with the task's result).
 */
case class CountingFilter(child: Expression, rejected: SQLMetric)
  extends UnaryExpression with Predicate {

  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val passes = child.eval(input) == true
    if (!passes) rejected += 1
    passes
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val metric = ctx.addReferenceObj("rejected", rejected)
    val c = child.genCode(ctx)
    ev.copy(code = code"""
      ${c.code}
      boolean ${ev.value} = !${c.isNull} && ${c.value};
      if (!${ev.value}) $metric.add(1L);
      """, isNull = FalseLiteral)
  }

  override def toString: String = child.toString

  override def sql: String = child.sql

  override protected def withNewChildInternal(newChild: Expression): CountingFilter =
    copy(child = newChild)
}

/**
 * The planned scan with one more data filter, pushed to the file format, and the planned scan's
 * metrics: a scan fixes its pushed filters when planned, so the bound needs a new scan, but what
 * it reads is the planned scan's to report.
 */
private final class PushedScan(planned: FileSourceScanExec, filter: Expression)
  extends FileSourceScanExec(
    planned.relation, planned.stream, planned.output, planned.requiredSchema,
    planned.partitionFilters, planned.optionalBucketSet, planned.optionalNumCoalescedBuckets,
    planned.dataFilters :+ filter, planned.tableIdentifier, planned.disableBucketedScan,
    planned.markedForSingleTaskExecution) {

  override def metrics: Map[String, SQLMetric] = planned.metrics

  override lazy val driverMetrics: Map[String, SQLMetric] = planned.driverMetrics
}
